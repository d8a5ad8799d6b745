/**
 * The server's own limits (src/http/connections.ts) against raw sockets, the way a slow or
 * flooding client holds connections: silence, headers a byte at a time, more connections than
 * the copy can hold. Short timeouts are injected; the defaults are the documented constants.
 */
import { once } from 'node:events';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createGatewayServer,
  defaultMaxConnections,
  type GatewayServer,
} from '../../src/http/connections.js';
import { until } from '../../support/wait.js';

const opened: GatewayServer[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const gateway of opened.splice(0)) {
    gateway.server.closeAllConnections();
    await new Promise((resolve) => gateway.server.close(resolve));
  }
});

type Limits = Parameters<typeof createGatewayServer>[1];

/** A gateway server on a free loopback port, closed after the test. */
async function listening(
  listener: Parameters<typeof createGatewayServer>[0],
  limits: Limits,
): Promise<{ gateway: GatewayServer; port: number }> {
  const gateway = createGatewayServer(listener, limits);
  opened.push(gateway);
  gateway.server.listen(0, '127.0.0.1');
  await once(gateway.server, 'listening');
  return { gateway, port: (gateway.server.address() as AddressInfo).port };
}

async function serve(limits: Limits): Promise<number> {
  return (await listening((_request, response) => response.end('ok'), limits)).port;
}

interface Watched {
  readonly socket: Socket;
  received(): string;
  closed(): boolean;
}

async function open(port: number): Promise<Watched> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await once(socket, 'connect');
  return { socket, received: () => received, closed: () => closed };
}

const REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';

/**
 * A new client past the cap of two held by `oldest` and `slow`: it is answered, `oldest` is
 * closed without an answer to make room, and `slow` stays open. Returns the new client.
 */
async function newcomerClosesOldest(
  port: number,
  oldest: Watched,
  slow: Watched,
): Promise<Watched> {
  const client = await open(port);
  client.socket.write(REQUEST);
  await until(() => client.received().includes('ok'));
  await until(oldest.closed);
  expect(oldest.received()).toBe('');
  expect(slow.closed()).toBe(false);
  return client;
}

describe('connection limits', () => {
  it('closes a connection that sends nothing once the headers timeout has passed', async () => {
    const port = await serve({ keepAliveTimeoutMs: 60_000, headersTimeoutMs: 300 });
    const silent = await open(port);
    const started = Date.now();
    await until(silent.closed, 5_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('answers 408 and closes a connection whose headers trickle in', async () => {
    const port = await serve({ keepAliveTimeoutMs: 60_000, headersTimeoutMs: 500 });
    const slow = await open(port);
    slow.socket.write('GET / HTTP/1.1\r\n');
    const trickle = setInterval(() => slow.socket.write('X'), 50);
    try {
      await until(slow.closed, 5_000);
    } finally {
      clearInterval(trickle);
    }
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('keeps an idle keep-alive connection past the headers timeout: only its idle time counts', async () => {
    const port = await serve({ keepAliveTimeoutMs: 60_000, headersTimeoutMs: 300 });
    const client = await open(port);
    client.socket.write(REQUEST);
    await until(() => client.received().includes('ok'));
    // Idle for twice the headers timeout, then a second request on the same connection.
    const idleUntil = Date.now() + 700;
    await until(() => Date.now() >= idleUntil, 2_000);
    expect(client.closed()).toBe(false);
    client.socket.write(REQUEST);
    await until(() => client.received().split('HTTP/1.1 200').length === 3);
  });

  it('past the cap, closes the connection waiting longest without complete headers, and serves the new one', async () => {
    const port = await serve({ keepAliveTimeoutMs: 60_000, maxConnections: 2 });
    // Two connections trickling their headers (a slow-headers flood) hold the cap.
    const oldest = await open(port);
    oldest.socket.write('GET / HTTP/1.1\r\nX-Slow: a');
    const slow = await open(port);
    slow.socket.write('GET / HTTP/1.1\r\nX-Slow: a');
    // A new client gets in: the oldest of them makes room, without an answer.
    const client = await newcomerClosesOldest(port, oldest, slow);
    // The client is idle now, and the slow one waited longer: the next newcomer closes that one.
    const next = await open(port);
    await until(slow.closed);
    expect(client.closed()).toBe(false);
    next.socket.write(REQUEST);
    await until(() => next.received().includes('ok'));
  });

  it('past the cap with none idle, closes the oldest request whose body is still trickling in', async () => {
    // The listener waits for whole bodies, as yoga does: a slow body holds its connection.
    let started = 0;
    const { port } = await listening(
      (request, response) => {
        started += 1;
        request.resume().once('end', () => response.end('ok'));
      },
      { keepAliveTimeoutMs: 60_000, maxConnections: 2 },
    );
    const slowBody = 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{';
    const oldest = await open(port);
    oldest.socket.write(slowBody);
    const slow = await open(port);
    slow.socket.write(slowBody);
    // Both requests have started (headers read), so neither is an idle connection.
    await until(() => started === 2);
    await newcomerClosesOldest(port, oldest, slow);
  });

  it('answers 503 with Retry-After past the cap only when every connection has a request in progress', async () => {
    const answers: Array<() => void> = [];
    const { port } = await listening(
      (_request, response) => answers.push(() => response.end('ok')),
      { keepAliveTimeoutMs: 60_000, maxConnections: 2 },
    );
    const held = [await open(port), await open(port)];
    for (const client of held) client.socket.write(REQUEST);
    await until(() => answers.length === 2);
    const over = await open(port);
    await until(over.closed);
    expect(over.received()).toMatch(/^HTTP\/1\.1 503[\s\S]*Retry-After: 1/);
    // Requests in progress are never cut for a newcomer.
    for (const answer of answers) answer();
    await until(() => held.every((client) => client.received().includes('ok')));
    expect(held.some((client) => client.closed())).toBe(false);
  });
});

describe('defaultMaxConnections', () => {
  it('leaves descriptors for the service pool and Redis out of the open-file limit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'limits-'));
    const file = join(dir, 'limits');
    try {
      await writeFile(
        file,
        'Limit                     Soft Limit           Hard Limit           Units     \n' +
          'Max open files            1024                 1048576              files     \n',
      );
      expect(defaultMaxConnections(256, file)).toBe(640);
      await writeFile(
        file,
        'Max open files            100                  100                  files\n',
      );
      expect(defaultMaxConnections(256, file)).toBe(64);
      expect(defaultMaxConnections(256, join(dir, 'missing'))).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('draining with event streams open', () => {
  const STREAM_REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n';

  /** A server whose event streams stay open until `endStreams()`; other requests get 'ok'. */
  async function serveStreams(headers: Record<string, string> = {}): Promise<{
    gateway: GatewayServer;
    port: number;
    endStreams(): void;
  }> {
    const open: Array<() => void> = [];
    const { gateway, port } = await listening(
      (request, response) => {
        if (!request.headers.accept?.includes('text/event-stream')) return void response.end('ok');
        response.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
        response.write(': stream\n\n');
        open.push(() => response.end());
      },
      { keepAliveTimeoutMs: 60_000 },
    );
    return { gateway, port, endStreams: () => open.splice(0).forEach((end) => end()) };
  }

  it('closes the connection of a stream that began before the drain once the stream ends', async () => {
    const { gateway, port, endStreams } = await serveStreams();
    const client = await open(port);
    client.socket.write(STREAM_REQUEST);
    await until(() => client.received().includes(': stream'));
    gateway.closeAfterEachResponse();
    endStreams();
    // The stream ends in full (its last chunk), then the connection closes: nothing waits for
    // the keep-alive timeout (or a drain's deadline) on it.
    await until(client.closed, 2_000);
    expect(client.received()).toMatch(/: stream\n\n\r\n0\r\n\r\n$/);
    expect(client.received()).not.toMatch(/connection: close/i);
  });

  it('closes the connection of a stream begun during the drain that says keep-alive, once it ends', async () => {
    // yoga's SSE and multipart answers say `Connection: keep-alive` over the drain's `close`.
    const { gateway, port, endStreams } = await serveStreams({ connection: 'keep-alive' });
    const client = await open(port);
    gateway.closeAfterEachResponse();
    client.socket.write(STREAM_REQUEST);
    await until(() => client.received().includes(': stream'));
    endStreams();
    await until(client.closed, 2_000);
    expect(client.received()).toMatch(/: stream\n\n\r\n0\r\n\r\n$/);
  });

  it('keeps the connection of a stream that ends while not draining', async () => {
    const { port, endStreams } = await serveStreams();
    const client = await open(port);
    client.socket.write(STREAM_REQUEST);
    await until(() => client.received().includes(': stream'));
    endStreams();
    await until(() => client.received().endsWith('0\r\n\r\n'));
    client.socket.write(REQUEST);
    await until(() => client.received().includes('ok'));
    expect(client.closed()).toBe(false);
  });
});

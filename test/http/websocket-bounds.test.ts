/**
 * WebSocket connections are bounded like HTTP requests: frames by MAX_BODY_BYTES (refused from
 * their length header, never buffered), `connection_init` smaller still, connections per copy,
 * and a refusal says what was missing or wrong.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  attachWebSocket,
  CLOSE_REASON_MISSING_CREDENTIALS,
  MAX_CONNECTION_INIT_BYTES,
  type AttachedWebSocket,
} from '../../src/http/websocket.js';
import { GRAPHQL_PATH } from '../../src/http/paths.js';
import { HeldStreams } from '../../src/traffic/held-streams.js';
import { DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import type { TestGateway } from '../fixtures/harness.js';
import { startWebSocketServer, type WebSocketServer } from '../fixtures/websocket-server.js';
import { untilAsync } from '../../support/wait.js';

const MAX_PAYLOAD = 100_000;
const MAX_CONNECTIONS = 3;
const MAX_PER_ACCOUNT = 2;

let served: WebSocketServer;
let test: TestGateway;
let server: Server;
let url: string;
beforeAll(async () => {
  served = await startWebSocketServer(() => ({
    held: new HeldStreams(MAX_CONNECTIONS, MAX_PER_ACCOUNT),
    maxPayloadBytes: MAX_PAYLOAD,
  }));
  ({ test, server, url } = served);
});
afterAll(() => served.close());

interface Closed {
  readonly code: number;
  readonly reason: string;
}

async function open(at = url): Promise<WebSocket> {
  const socket = new WebSocket(at, 'graphql-transport-ws');
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return socket;
}

function closed(socket: WebSocket): Promise<Closed> {
  return new Promise((resolve) => {
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    // A frame refused mid-send may also reset the socket: the close still comes.
    socket.on('error', () => undefined);
  });
}

const basic = (c: { sysId: string; authToken: string }) =>
  `Basic ${Buffer.from(`${c.sysId}:${c.authToken}`).toString('base64')}`;
const demo = basic(DEMO_CREDENTIALS);
const second = basic(SECOND_DEMO_CREDENTIALS);

/** A connection whose connection_init the service accepted. */
async function acked(authorization = demo): Promise<WebSocket> {
  const socket = await open();
  const ack = new Promise<string>((resolve) =>
    socket.once('message', (data: Buffer) => resolve(String(data))),
  );
  socket.send(
    JSON.stringify({ type: 'connection_init', payload: { Authorization: authorization } }),
  );
  expect(JSON.parse(await ack)).toEqual({ type: 'connection_ack' });
  return socket;
}

async function initWith(payload: unknown): Promise<Closed> {
  return sendRaw(Buffer.from(JSON.stringify({ type: 'connection_init', payload })));
}

async function sendRaw(frame: Buffer): Promise<Closed> {
  const socket = await open();
  const end = closed(socket);
  socket.send(frame);
  return end;
}

describe('WebSocket bounds', () => {
  it('refuses a frame over MAX_BODY_BYTES from its header (1009), without holding it', async () => {
    // Built once, before measuring: what grows after this is the gateway's, not the sender's.
    const frame = Buffer.from(
      JSON.stringify({ type: 'connection_init', payload: { Authorization: 'x'.repeat(4 << 20) } }),
    );
    await sendRaw(Buffer.from('{}'));
    const rssBefore = process.memoryUsage().rss;
    for (let i = 0; i < 6; i += 1) {
      const end = await sendRaw(frame);
      expect(end.code).toBe(1009);
    }
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(50 * 1024 * 1024);
  });

  it('refuses a connection_init over MAX_CONNECTION_INIT_BYTES (4413)', async () => {
    const end = await initWith({ Authorization: 'x'.repeat(MAX_CONNECTION_INIT_BYTES + 1) });
    expect(end).toEqual({
      code: 4413,
      reason: `connection_init larger than ${MAX_CONNECTION_INIT_BYTES} bytes`,
    });
  });

  it('closes 4403 naming the connectionParams expected, or what was wrong with them', async () => {
    expect(await initWith({})).toEqual({ code: 4403, reason: CLOSE_REASON_MISSING_CREDENTIALS });
    expect(CLOSE_REASON_MISSING_CREDENTIALS).toContain('"Authorization":"Basic');
    const malformed = await initWith({ 'X-Sys-Id': 'AC-1' });
    expect(malformed).toEqual({
      code: 4403,
      reason:
        'Malformed credentials in connectionParams: X-Sys-Id and X-Auth-Token must be sent together',
    });
  });

  it('cuts a refused client that never answers the close frame (ws would hold it 30 s)', async () => {
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    const before = await connections();
    const socket = await open();
    socket.on('error', () => undefined);
    socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    // Stops reading: the close frame is never seen, so never answered.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    // Cut after the 1 s grace; ws alone would wait 30 s for the answer.
    await untilAsync(async () => (await connections()) === before, 10_000);
    socket.terminate();
  });

  it('closes 4403 a connection_init whose credentials the service refuses; keeps an accepted one', async () => {
    const invented = {
      Authorization: `Basic ${Buffer.from('AC-made-up:nope').toString('base64')}`,
    };
    expect(await initWith(invented)).toEqual({
      code: 4403,
      reason: 'The SMS service refused the credentials',
    });
    const socket = await open();
    const acked = new Promise<string>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(String(data))),
    );
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: demo } }));
    expect(JSON.parse(await acked)).toEqual({ type: 'connection_ack' });
    const end = closed(socket);
    socket.close();
    await end;
  });

  it(`keeps at most ${MAX_PER_ACCOUNT} verified connections per account and ${MAX_CONNECTIONS} per copy (1013 past either); connections not yet verified do not count`, async () => {
    // Two connections without a connection_init yet (browsers' upgrades carry no credentials).
    const idle = await Promise.all([open(), open()]);
    const held = await Promise.all(Array.from({ length: MAX_PER_ACCOUNT }, () => acked()));
    const refusedWith = async (authorization: string) => {
      const extra = await open();
      const end = closed(extra);
      extra.send(
        JSON.stringify({ type: 'connection_init', payload: { Authorization: authorization } }),
      );
      return end;
    };
    // One account cannot take every slot: another account's connection is still accepted.
    expect(await refusedWith(demo)).toEqual({
      code: 1013,
      reason: `This account already holds ${MAX_PER_ACCOUNT} streams on this gateway copy; close one first`,
    });
    held.push(await acked(second));
    expect(await refusedWith(second)).toEqual({
      code: 1013,
      reason: 'Too many streams on this gateway copy; try again later',
    });
    for (const socket of [...idle, ...held]) socket.close();
    await Promise.all([...idle, ...held].map((socket) => closed(socket)));
  });
});

describe('WebSocket connections not yet verified', () => {
  let other: Server;
  let otherWs: AttachedWebSocket;
  afterAll(async () => {
    await otherWs.close();
    await new Promise((resolve) => other.close(resolve));
  });

  /** A server whose verification never answers: every connection stays unverified. */
  async function serveUnverified(options: { maxUnverified: number; windowMs: number }) {
    other = createServer(test.gateway);
    otherWs = attachWebSocket(other, test.gateway, {
      path: GRAPHQL_PATH,
      maxPerConnection: 20,
      maxUnverified: options.maxUnverified,
      verificationWindowMs: options.windowMs,
      verify: () => new Promise<boolean>(() => undefined),
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    return `ws://127.0.0.1:${(other.address() as AddressInfo).port}${GRAPHQL_PATH}`;
  }

  it('closes the oldest past the per-copy cap (1013), and any not verified within the window (4408)', async () => {
    const at = await serveUnverified({ maxUnverified: 2, windowMs: 1_500 });
    const first = await open(at);
    const firstEnd = closed(first);
    first.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: demo } }));
    const second = await open(at);
    const secondEnd = closed(second);
    let secondClosed = false;
    void secondEnd.then(() => (secondClosed = true));
    // A third makes room by closing the oldest, whose verification is still pending.
    const third = await open(at);
    const thirdEnd = closed(third);
    expect(await firstEnd).toEqual({
      code: 1013,
      reason: 'Too many connections awaiting verification; try again',
    });
    expect(secondClosed).toBe(false);
    // Those left are closed once the window has passed: an invented pair holds nothing for long.
    third.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: demo } }));
    const window = { code: 4408, reason: 'connection_init not verified within 1500 ms' };
    expect(await thirdEnd).toEqual(window);
    expect(await secondEnd).toEqual(window);
  });
});

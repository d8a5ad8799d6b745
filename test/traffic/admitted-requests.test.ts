/**
 * Admission in front of the real HTTP server, with the loop held "busy" by a stand-in load: a
 * freed seat goes to the account that used least, each credential pair the copy has not seen
 * accepted has its own line, and a refusal is a 429 that a browser can read.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerAdapter, type ServerAdapterPlugin } from '@whatwg-node/server';
import { admitRequests } from '../../src/traffic/admitted-requests.js';
import type { Ticketed } from '../../src/traffic/ticket.js';
import { useStreamSeats } from '../../src/http/plugins/stream-seats.js';
import { Identities, type Identity } from '../../src/core/identity.js';
import {
  Admission,
  unverifiedPair,
  type LoopLoad,
  type Tenant,
} from '../../src/traffic/fair-admission.js';
import { GRAPHQL_PATH, PROBE_PATHS } from '../../src/http/paths.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { benchCredentials } from '../../support/bench-accounts.js';
import { serveGateway, type ServedGateway } from '../clients/served-gateway.js';
import { basicAuth, createTestGateway } from '../fixtures/harness.js';
import { startRecordingUpstream } from '../../support/recording-upstream.js';
import { captureLogs } from '../fixtures/captured-logs.js';
import { until, untilAsync } from '../../support/wait.js';

const LATENCY_MS = 150;
const QUERY = '{ ownedNumbers { tid } }';
const ORIGIN = 'https://app.example.com';

const busy: LoopLoad = { busy: true, utilization: 1, onChange: () => () => undefined };

let served: ServedGateway;
let origin: string;
const { logger, lines } = captureLogs();

beforeAll(async () => {
  served = await serveGateway(
    {
      loopLoad: busy,
      logger,
      metrics: createMetrics(),
      corsOrigins: [ORIGIN],
      admission: { minSeats: 1, maxWaiting: 3, maxWaitMs: 2_000 },
    },
    { latencyMs: LATENCY_MS, benchAccounts: { count: 1, numbers: 7 } },
  );
  origin = served.origin;
  // Both accounts verified (each alone: no turns yet).
  await post(basicAuth(DEMO_CREDENTIALS));
  await post(basicAuth(SECOND_DEMO_CREDENTIALS));
});

afterAll(() => served.close());

async function post(headers: Record<string, string>) {
  const response = await request(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: ORIGIN, ...headers },
    body: JSON.stringify({ query: QUERY }),
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    body: JSON.parse(text) as {
      data?: unknown;
      errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
    },
    at: performance.now(),
  };
}

async function metric(name: string): Promise<string> {
  const text = await (await request(`${origin}/metrics`)).body.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .join('\n');
}

describe('admission over HTTP while the copy is busy', () => {
  it("gives the next seat to another account's request, not to the flood's line", async () => {
    const flood = basicAuth(DEMO_CREDENTIALS);
    const started = performance.now();
    const floodAnswers = [post(flood), post(flood), post(flood)];
    await untilAsync(
      async () => Number((await metric('sms_admission_waiting')).split(' ')[1]) >= 2,
      15_000,
    );
    const sent = performance.now();
    const other = await post(basicAuth(SECOND_DEMO_CREDENTIALS));
    const answers = await Promise.all(floodAnswers);
    expect(other.status).toBe(200);
    expect(other.body.data).toBeTruthy();
    // The other account did not wait behind the flood's line (one running and two waiting, each a
    // service round trip): at most behind its own request still running, then its own round trip.
    expect(other.at - sent).toBeLessThan(3 * LATENCY_MS);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    // The flood's requests ran one after another: the last ends after three round trips.
    expect(Math.max(...answers.map((a) => a.at)) - started).toBeGreaterThanOrEqual(3 * LATENCY_MS);
  });

  it('counts the wait in the latency metrics and logs show, from arrival, and shows it on its own', async () => {
    lines.length = 0;
    const flood = basicAuth(DEMO_CREDENTIALS);
    // Read before the seat is taken: read between, on a busy machine, it could take most of the
    // round trip the next request is meant to wait behind.
    const before = await metric('sms_admission_wait_seconds_count');
    const ahead = post(flood);
    // The one seat is taken once the request ahead is at the service.
    await until(() => served.simulator.load().inFlight >= 1, 5_000);
    // Behind one request at the service (LATENCY_MS), with the one seat taken by its own account
    // (another account that used far less would borrow it: fair-admission.test.ts).
    const behind = await post(flood);
    await ahead;
    expect(behind.status).toBe(200);
    const waits = lines.filter((l) => l.msg === 'request' && typeof l.waitedMs === 'number');
    expect(waits.length).toBeGreaterThanOrEqual(1);
    const waited = waits.at(-1) as { waitedMs: number; durationMs: number };
    expect(waited.waitedMs).toBeGreaterThanOrEqual(LATENCY_MS / 2);
    expect(waited.durationMs).toBeGreaterThanOrEqual(waited.waitedMs + LATENCY_MS / 2);
    // The histogram of waits grew, and the request duration's slowest bucket holds the wait.
    expect(await metric('sms_admission_wait_seconds_count')).not.toBe(before);
    const slow = await metric('sms_admission_wait_seconds_bucket{le="0.025"');
    const all = await metric('sms_admission_wait_seconds_count');
    expect(Number(slow.split(' ').at(-1))).toBeLessThan(Number(all.split(' ').at(-1)));
  });

  it('refuses past the line with 429, Retry-After and RATE_LIMITED, readable by the page that asked', async () => {
    const flood = basicAuth(DEMO_CREDENTIALS);
    // The other account keeps asking while the flood arrives, so the seat stays contended
    // (one request of it, finished before the flood came in on a busy machine, left none).
    let flooding = true;
    let asked = 0;
    const keepActive = (async () => {
      for (; flooding; asked += 1) await post(basicAuth(SECOND_DEMO_CREDENTIALS));
    })();
    await until(() => asked >= 1, 15_000);
    // One runs, three wait, the rest are refused at once: at least one of six whenever they
    // arrive within a round trip of each other, which a busy machine may stretch.
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(flood)));
    flooding = false;
    await keepActive;
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(answers.filter((a) => a.status !== 429 && a.status !== 200)).toEqual([]);
    const [refusal] = refused;
    expect(refusal?.headers['retry-after']).toBe('1');
    expect(refusal?.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(refusal?.headers['x-request-id']).toBeTruthy();
    expect(refusal?.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED', retryAfter: 1 });
    expect(refusal?.body.errors?.[0]?.message).toMatch(/busy.*retry after 1 s/);
    expect(JSON.stringify(refusal?.body)).not.toContain(DEMO_CREDENTIALS.authToken);
    expect(await metric('sms_admission_refused_total')).toContain(
      `sms_admission_refused_total{tenant="account"} ${refused.length}`,
    );
  });

  it('frees the place of an SSE subscription when its stream starts, not when it ends', async () => {
    const live = await serveGateway({
      loopLoad: busy,
      admission: { minSeats: 1, maxWaiting: 2, maxWaitMs: 1_000 },
    });
    const base = `${live.origin}/graphql`;
    const auth = basicAuth(DEMO_CREDENTIALS);
    const ask = (headers: Record<string, string>, body: object) =>
      request(base, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    try {
      for (const a of [auth, basicAuth(SECOND_DEMO_CREDENTIALS)]) {
        await (await ask(a, { query: QUERY })).body.text();
      }
      const stream = await ask(
        { ...auth, accept: 'text/event-stream' },
        { query: 'subscription { messageAdded { tid } }' },
      );
      expect(stream.headers['content-type']).toContain('text/event-stream');
      // The stream stays open; with another account active (turns), the same account's next
      // query still runs at once, and is answered.
      const other = ask(basicAuth(SECOND_DEMO_CREDENTIALS), { query: QUERY });
      const query = await ask(auth, { query: QUERY });
      await (await other).body.text();
      expect(query.statusCode).toBe(200);
      expect(await query.body.text()).toContain('ownedNumbers');
      stream.body.destroy();
    } finally {
      await live.close();
    }
  });

  it('admits a WebSocket at its connection_init, by the credentials in it, not at the upgrade', async () => {
    const live = await serveGateway(
      { loopLoad: busy, admission: { minSeats: 1, maxWaiting: 1, maxWaitMs: 2_000 } },
      { latencyMs: LATENCY_MS },
    );
    const url = `${live.origin.replace(/^http/, 'ws')}/graphql`;
    const sockets: WebSocket[] = [];
    const connect = () =>
      new Promise<WebSocket | string>((resolve) => {
        const socket = new WebSocket(url, 'graphql-transport-ws');
        sockets.push(socket);
        socket.once('open', () => resolve(socket));
        socket.once('unexpected-response', (_request, response) => {
          resolve(`${response.statusCode} retry-after ${response.headers['retry-after']}`);
        });
        socket.once('error', () => undefined);
      });
    const init = (socket: WebSocket, credentials: Record<string, string>) =>
      new Promise<string>((resolve) => {
        socket.once('message', (data: Buffer) => resolve(JSON.parse(String(data)).type));
        socket.once('close', (code, reason) => resolve(`${code} ${reason.toString()}`));
        socket.send(JSON.stringify({ type: 'connection_init', payload: credentials }));
      });
    const invented = basicAuth({ sysId: 'AC-made-up-ws', authToken: 'token-ws' });
    try {
      // The account is verified (one request alone, no turns).
      await (
        await request(`${live.origin}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
          body: JSON.stringify({ query: QUERY }),
        })
      ).body.text();
      // Five upgrades while the loop is busy: none waits or is refused, none carries credentials.
      const opened = await Promise.all(Array.from({ length: 5 }, connect));
      expect(opened.every((socket) => typeof socket !== 'string')).toBe(true);
      const [account, a, b, c, newcomer] = opened as WebSocket[];
      // The account's connection_init goes in at once. One invented pair's three then find the
      // seat taken: one waits in the pair's line (of one) and the others are refused (1013, try
      // again); a pair never seen before waits in a line of its own, not behind that full one.
      // Each verified in its turn, holding the seat: one call per pair, both closed 4403.
      expect(await init(account!, basicAuth(DEMO_CREDENTIALS))).toBe('connection_ack');
      live.simulator.resetCalls();
      const hold = request(`${live.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
        body: JSON.stringify({ query: QUERY }),
      });
      await until(() => live.simulator.load().inFlight >= 1, 5_000);
      const inits = [init(a!, invented), init(b!, invented), init(c!, invented)];
      const fresh = init(newcomer!, basicAuth({ sysId: 'AC-made-up-new', authToken: 'token-new' }));
      expect((await Promise.all(inits)).sort()).toEqual([
        '1013 The gateway is busy; retry after 1 s',
        '1013 The gateway is busy; retry after 1 s',
        '4403 The SMS service refused the credentials',
      ]);
      expect(await fresh).toBe('4403 The SMS service refused the credentials');
      await (await hold).body.text();
      const inventedCalls = live.simulator.calls.filter((call) => call.accountSysId === null);
      expect(inventedCalls).toHaveLength(2);
    } finally {
      for (const socket of sockets) socket.terminate();
      await live.close();
    }
  });

  it("verifies a pair it does not know before it waits: a new account's first query is answered amid a flood of an invented pair", async () => {
    const flooding = basicAuth({ sysId: 'AC-made-up-0', authToken: 'token-0' });
    // A real account this copy has never seen (a new user, or anyone after a restart).
    const newcomer = basicAuth(benchCredentials(0));
    const active = post(basicAuth(SECOND_DEMO_CREDENTIALS));
    served.simulator.resetCalls();
    const flood = [post(flooding), post(flooding), post(flooding)];
    const first = await post(newcomer);
    const answers = await Promise.all(flood);
    await active;
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    expect(answers.map((a) => a.body.errors?.[0]?.extensions?.code)).toEqual([
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
    ]);
    // The invented pair cost the service its first request's call and one verification at most;
    // the rest were refused from memory.
    const invented = served.simulator.calls.filter((call) => call.accountSysId === null);
    expect(invented.length).toBeGreaterThanOrEqual(1);
    expect(invented.length).toBeLessThanOrEqual(2);
  });
});

describe('how long a request holds its place', () => {
  /**
   * A server whose one request, answered as yoga answers (a Response, with the gateway's
   * useStreamSeats), writes its head and first part, then its body on a later read; logs the
   * release. The order of the events tells, not a pause: a place freed at close comes after the body.
   */
  async function holding(contentType: string, bodyBytes = 0) {
    const events: string[] = [];
    const charged: number[] = [];
    const admission = {
      admit: () => (cost?: { bytes?: number }) => {
        events.push('released');
        charged.push(cost?.bytes ?? 0);
      },
    } as unknown as Admission;
    const encoder = new TextEncoder();
    const answer = createServerAdapter<Ticketed>(
      () => {
        let parts = 0;
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (parts++ === 0) {
              controller.enqueue(encoder.encode('first part'));
              events.push('head written');
              return;
            }
            events.push('body written');
            if (bodyBytes > 0) controller.enqueue(encoder.encode('x'.repeat(bodyBytes)));
            controller.close();
          },
        });
        return new Response(body, { headers: { 'content-type': contentType } });
      },
      { plugins: [useStreamSeats() as ServerAdapterPlugin<Ticketed>] },
    );
    const server = createServer(
      admitRequests(
        (request, response, context) => void answer(request, response, context),
        admission,
        new Identities(null),
        () => 'anonymous',
        { graphql: GRAPHQL_PATH, probes: PROBE_PATHS },
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await request(`http://127.0.0.1:${port}/graphql`);
      await response.body.text();
      // The close that releases the place may follow the last byte read by a moment.
      await until(() => events.includes('released'), 5_000);
      return Object.assign(events, { charged });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('holds it until an answer is written, so a large one (the GraphiQL page) pays for its writing', async () => {
    const events = await holding('text/html');
    expect(events.indexOf('released')).toBeGreaterThan(events.indexOf('body written'));
  });

  it('tells admission the bytes the answer took, so it charges work and not only the request', async () => {
    const { charged } = await holding('application/json', 200_000);
    expect(charged).toHaveLength(1);
    // The body, its head and chunk framing: at least the body, not much more.
    expect(charged[0]).toBeGreaterThanOrEqual(200_000);
    expect(charged[0]).toBeLessThan(201_000);
  });

  it('frees it once the head of a stream is out (SSE, @defer): an open stream holds none', async () => {
    for (const type of ['text/event-stream', 'multipart/mixed; boundary="-"']) {
      const events = await holding(type);
      expect(events.indexOf('released')).toBeLessThan(events.indexOf('body written'));
    }
  });
});

describe('a pair this copy does not know, while requests wait for seats', () => {
  it('waits in the unverified class, in its own line: an account that asked less goes first', async () => {
    const admission = new Admission({ minSeats: 1, maxWaiting: 10, maxWaitMs: 5_000, load: busy });
    const running: string[] = [];
    const open = new Map<string, ServerResponse>();
    // The caller is who its ticket says (sys_id A is an account; the others unknown pairs).
    const who = (identity: Identity) =>
      identity.kind === 'present' ? identity.credentials.sysId : 'nobody';
    const tenantOf = (identity: Identity): Tenant =>
      who(identity) === 'A' ? 'account:A' : unverifiedPair(who(identity));
    const server = createServer(
      admitRequests(
        (_request, response, { ticket }) => {
          running.push(who(ticket.identity));
          open.set(who(ticket.identity), response);
        },
        admission,
        new Identities(null),
        tenantOf,
        { graphql: GRAPHQL_PATH, probes: PROBE_PATHS },
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const send = (who: string) =>
      void request(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'x-sys-id': who, 'x-auth-token': 'token' },
      })
        .then((r) => r.body.text())
        .catch(() => '');
    try {
      send('invented-1');
      await until(() => running.length === 1, 5_000);
      send('invented-2');
      await until(() => admission.waiting === 1, 5_000);
      send('A');
      await until(() => admission.waiting === 2, 5_000);
      open.get('invented-1')?.end();
      await until(() => running.length === 2, 5_000);
      expect(running).toEqual(['invented-1', 'A']);
      open.get('A')?.end();
      await until(() => running.length === 3, 5_000);
      expect(running[2]).toBe('invented-2');
    } finally {
      for (const response of open.values()) response.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('which requests wait their turn', () => {
  it('admits a request to any other path like a GraphQL one, answers probes at once, and refuses one past its line with a plain 429', async () => {
    const admission = new Admission({ minSeats: 1, maxWaiting: 1, maxWaitMs: 5_000, load: busy });
    const open: ServerResponse[] = [];
    const served: string[] = [];
    const server = createServer(
      admitRequests(
        (request, response) => {
          served.push(request.url ?? '');
          if (request.url === '/graphql') open.push(response);
          else response.end('ok');
        },
        admission,
        new Identities(null),
        () => 'anonymous',
        { graphql: GRAPHQL_PATH, probes: PROBE_PATHS },
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const get = (path: string) => request(`http://127.0.0.1:${port}${path}`);
    try {
      // The one seat is held by a GraphQL request.
      void get('/graphql').then((r) => r.body.text());
      await until(() => open.length === 1, 5_000);
      // Another path waits behind it; a probe does not.
      const file = get('/favicon.ico').then(async (r) => ({
        status: r.statusCode,
        body: await r.body.text(),
      }));
      await until(() => admission.waiting === 1, 5_000);
      const probe = await get('/readiness?from=balancer');
      expect(probe.statusCode).toBe(200);
      await probe.body.text();
      expect(served).not.toContain('/favicon.ico');
      // The line holds one: the next is refused without reaching the gateway.
      const refused = await get('/unknown/path');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(await refused.body.text()).toMatch(/busy/);
      expect(served).not.toContain('/unknown/path');
      open[0]?.end();
      expect(await file).toEqual({ status: 200, body: 'ok' });
    } finally {
      for (const response of open) response.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a request priced once its document is read', () => {
  it('prices its seat by the document and its estimate, on the lane and on yoga’s path alike', async () => {
    const upstream = await startRecordingUpstream();
    const test = createTestGateway(upstream.url);
    const priced: Array<{ document: object; estimate: number }> = [];
    const admission = {
      admit: () =>
        Object.assign(() => undefined, {
          price: (document: object, estimate: number) => void priced.push({ document, estimate }),
        }),
    } as unknown as Admission;
    const server = createServer(
      admitRequests(
        test.gateway.listener,
        admission,
        test.client.credentials.identities,
        () => 'anonymous',
        { graphql: GRAPHQL_PATH, probes: PROBE_PATHS },
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/graphql`;
      const headers = { ...basicAuth(DEMO_CREDENTIALS), accept: 'application/json' };
      const page = '{ ownedNumbers { tid messages(first: 50) { edges { node { id } } } } }';
      // A JSON POST rides the lane; a GET is yoga's.
      for (const query of [QUERY, page, QUERY]) {
        const response = await request(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        });
        await response.body.text();
      }
      const viaGet = await request(`${url}?query=${encodeURIComponent(page)}`, { headers });
      await viaGet.body.text();
      expect(priced).toHaveLength(4);
      const [small, costly, again, got] = priced as [
        (typeof priced)[0],
        (typeof priced)[0],
        (typeof priced)[0],
        (typeof priced)[0],
      ];
      // The same text is the same parsed document: what it cost last time is found by it.
      expect(again.document).toBe(small.document);
      expect(costly.estimate).toBeGreaterThan(10 * small.estimate);
      expect(got.estimate).toBe(costly.estimate);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await test.close();
      await upstream.close();
    }
  });
});

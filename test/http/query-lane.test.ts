/**
 * src/http/query-lane.ts: the lane answers exactly as yoga does, in every configuration (the
 * default with APQ, the response cache, tracing, an allow-list). Each generated request goes over
 * HTTP to two gateways built alike, one served through the lane and one through yoga alone, in
 * turn, so both meet the same state (verdicts, cached answers, APQ's store) in the same order;
 * status, the headers a client reads, the decoded body and the request's log line must match. A
 * spy lane shows which requests the lane itself answers and which it hands back to yoga.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';
import { context, propagation, trace } from '@opentelemetry/api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createResponseCache } from '../../src/cache/response-cache.js';
import { allowListPlugin } from '../../src/http/plugins/allow-list.js';
import { queryLane, type LaneYoga } from '../../src/http/query-lane.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { startTracing, type Tracing } from '../../src/observability/tracing.js';
import { issueTicket } from '../../src/traffic/ticket.js';
import type { TicketedListener } from '../../src/traffic/admitted-requests.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import { accountScript, startScriptedUpstream } from '../../support/scripted-upstream.js';
import { captureLogs, type CapturedLogs } from '../fixtures/captured-logs.js';
import {
  basicAuth,
  createTestGateway,
  type TestGateway,
  type TestGatewayOptions,
} from '../fixtures/harness.js';

let upstream: RecordingUpstream;
let logs: CapturedLogs;
const servers: Server[] = [];

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  logs = captureLogs();
});

afterAll(async () => {
  for (const server of servers) server.close();
  await upstream.close();
});

/** A loopback server handing each request, with its ticket, to `listener`; kept in `arrived`. */
async function serve(
  test: TestGateway,
  listener: TicketedListener,
  arrived: IncomingMessage[] = [],
): Promise<string> {
  const identities = test.client.credentials.identities;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    arrived.push(request);
    listener(request, response, { ticket: issueTicket(identities, request.headers) });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

const VALID = basicAuth(DEMO_CREDENTIALS);
const INVENTED = { 'x-sys-id': 'SYS_NOBODY', 'x-auth-token': 'not-a-token' };
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (text: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(text) } });

interface Case {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** What a client can tell apart in an answer, and the log line it left. */
async function answer(url: string, sent: Case) {
  logs.lines.length = 0;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...sent.headers },
    body: sent.body,
  });
  const raw = Buffer.from(await response.arrayBuffer());
  const encoding = response.headers.get('content-encoding');
  // fetch decodes gzip and deflate itself, so what arrived encoded is decoded here only if not.
  const text = (() => {
    try {
      if (encoding === 'gzip') return gunzipSync(raw).toString();
      if (encoding === 'deflate') return inflateSync(raw).toString();
    } catch {
      // already decoded by fetch
    }
    return raw.toString();
  })();
  const line = logs.logged('request').at(-1);
  const { requestId, durationMs: _d, waitedMs: _w, time: _t, ...logged } = line ?? {};
  return {
    status: response.status,
    contentType: response.headers.get('content-type')?.toLowerCase(),
    encoding,
    vary: response.headers.get('vary'),
    accept: response.headers.get('accept'),
    etag: response.headers.get('etag'),
    lastModified: response.headers.get('last-modified'),
    warning: response.headers.get('warning'),
    requestIdEchoed: requestId === response.headers.get('x-request-id'),
    body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
    logged,
  };
}

const plainQueries = [
  { query: '{ ownedNumbers { tid number } }' },
  {
    query: 'query Mine { ownedNumbers { tid } } query Other { __typename }',
    operationName: 'Other',
  },
  { query: 'query Mine { ownedNumbers { tid } } query Other { __typename }' },
  { query: '{ ownedNumbers { tid nope } }' },
  { query: '{ ownedNumbers ' },
  { query: 'mutation { send }' },
  { query: 'subscription { messageAdded { body } }' },
  { query: '{ ownedNumbers { tid ... @defer { number } } }' },
  { query: '{ __schema { queryType { name } } }' },
  {
    query: 'query($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }',
    variables: { n: 2 },
  },
  {
    query: 'query($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }',
    variables: { n: 'two' },
  },
  {
    query: 'query($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }',
    variables: { n: 100_000 },
  },
  // Past MIN_COMPRESSED_BYTES: compressed when asked, and `Vary: Accept-Encoding` either way.
  {
    query:
      '{ ownedNumbers { tid number history(start: 0, end: 20) { messages { body sentAt } } } }',
  },
  // Past the lane's SLICED_FROM_BYTES (by the response budget's count): serialised in slices.
  { query: '{ ownedNumbers { history(start: 0, end: 400) { messages { id body sentAt } } } }' },
];

const oddBodies = [
  JSON.stringify({ query: '{ ownedNumbers { tid } }', extensions: {} }),
  JSON.stringify([{ query: '{ ownedNumbers { tid } }' }]),
  JSON.stringify({ query: '{ ownedNumbers { tid } }', unknown: 1 }),
  JSON.stringify({ query: 42 }),
  '{"query": "{ ownedNumbers { tid } }"',
  'null',
];

/** APQ (on unless an allow-list is): a hash before and after its query is registered. */
const APQ_QUERY = 'query Registered { ownedNumbers { tid type } }';
const apqParams = [
  { extensions: persisted(APQ_QUERY) },
  { query: APQ_QUERY, extensions: persisted(APQ_QUERY) },
  { query: APQ_QUERY, extensions: persisted('another query') },
  { documentId: sha256(APQ_QUERY) },
];

/** The allow-list: by documentId or APQ's hash; a subscription and @defer listed too. */
const LISTED = {
  tids: 'query Listed { ownedNumbers { tid number } }',
  paged: 'query Paged($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }',
  arrivals: 'subscription Arrivals { messageAdded { body } }',
  deferred: 'query Deferred { ownedNumbers { tid ... @defer { number } } }',
};
// Not the subscription: the stream yoga answers it with (Accept: */*) would not end.
const allowListParams = [
  { documentId: sha256(LISTED.tids) },
  { documentId: sha256(LISTED.paged), variables: { n: 2 } },
  { extensions: persisted(LISTED.tids) },
  { documentId: sha256(LISTED.deferred) },
  { documentId: 'not-listed' },
  {},
];

/** Requests the spy lane must answer itself (true) or hand back to yoga (false). */
type SpyCase = readonly [body: unknown, headers: Record<string, string>, byLane: boolean];

interface LaneConfig {
  readonly name: string;
  /** Params beside the plain queries. */
  readonly params: readonly object[];
  /** Requests compared before the generated ones. */
  readonly fixed?: readonly Case[];
  /** Each request sent this many times to each side: the cache's miss, then its hit. */
  readonly times: number;
  readonly spyCases: readonly SpyCase[];
  /** Its spans reach `receiver`. */
  readonly traced?: boolean;
  /** Options for one gateway (each side its own); started once per configuration. */
  readonly start: () => Promise<{
    options: () => TestGatewayOptions;
    stop?: () => Promise<void>;
  }>;
}

const JSON_ONLY = { accept: 'application/graphql-response+json, application/json;q=0.9' };
const plain = { query: '{ ownedNumbers { tid } }' };

/** Every configuration's: a plain query, invalid ones and refusals here; streams and the rest not. */
const commonSpyCases: SpyCase[] = [
  [plain, {}, true],
  [plain, JSON_ONLY, true],
  [{ ...plain, extensions: {} }, {}, true],
  [{ query: '{ ownedNumbers { nope } }' }, {}, true],
  [{ query: 'mutation { send }' }, {}, true],
  [{ query: 42 }, {}, true],
  [{ query: '{ ownedNumbers { tid } }', unknown: 1 }, {}, true],
  [plain, { accept: 'application/xml' }, false],
  [plain, { origin: 'https://app.example.com' }, false],
  [plain, { accept: 'text/event-stream' }, false],
  // A conditional request is one like any other: nothing answers 304.
  [plain, { 'if-none-match': '"x"' }, true],
  [plain, { 'x-graphql-event-stream-token': 'a-token' }, false],
  [{ query: 'subscription { messageAdded { body } }' }, JSON_ONLY, false],
  [{ query: '{ ownedNumbers { tid ... @defer { number } } }' }, JSON_ONLY, false],
  [{ query: `{ ownedNumbers { tid } } # ${'x'.repeat(2_000)}` }, {}, false],
  ['{"query": ', {}, false],
  ['[]', {}, false],
];

const apqSpyCases: SpyCase[] = [
  [{ query: APQ_QUERY, extensions: persisted(APQ_QUERY) }, {}, true],
  [{ extensions: persisted(APQ_QUERY) }, JSON_ONLY, true],
  [{ extensions: persisted('never registered') }, JSON_ONLY, true],
  // The store in memory tells its text at once, or that there is none: not a stream.
  [{ extensions: persisted(APQ_QUERY) }, {}, true],
  [{ extensions: persisted(APQ_QUERY) }, { accept: 'application/json, multipart/mixed' }, true],
  [{ extensions: persisted('never registered') }, {}, true],
];

/** A store that tells a hash's query only when asked in onParams, as Redis does. */
const laterStore = () => {
  const queries = new Map<string, string>();
  return {
    get: async (hash: string) => queries.get(hash) ?? null,
    set: (hash: string, query: string) => void queries.set(hash, query),
  };
};
const laterApqSpyCases: SpyCase[] = [
  [{ query: APQ_QUERY, extensions: persisted(APQ_QUERY) }, {}, true],
  [{ extensions: persisted(APQ_QUERY) }, JSON_ONLY, true],
  // Its text still to come, it could be a stream: an Accept that takes one is yoga's.
  [{ extensions: persisted(APQ_QUERY) }, {}, false],
  [{ extensions: persisted(APQ_QUERY) }, { accept: 'application/json, multipart/mixed' }, false],
];

const memoryCache = () => {
  const cache = createResponseCache(
    { ttlMs: 60_000, redisUrl: null, hmacKey: null },
    { logger: false },
  );
  if (!cache) throw new Error('the cache should be on');
  return cache;
};

const receiver = { exports: [] as string[], tracing: null as Tracing | null };

const CONFIGS: LaneConfig[] = [
  {
    name: 'default, with APQ',
    params: apqParams,
    times: 1,
    spyCases: apqSpyCases,
    start: async () => ({ options: () => ({}) }),
  },
  {
    name: 'the in-memory response cache, APQ in a store that answers later',
    params: apqParams,
    times: 2,
    spyCases: laterApqSpyCases,
    start: async () => ({
      options: () => ({ responseCache: memoryCache(), apqStore: laterStore() }),
    }),
  },
  {
    name: 'tracing',
    traced: true,
    params: apqParams,
    times: 1,
    spyCases: apqSpyCases,
    start: async () => {
      const server = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          if (req.url === '/otel/v1/traces') receiver.exports.push(body);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      const tracing = startTracing(new URL(`http://127.0.0.1:${port}/otel`), {
        instanceId: 'lane',
        version: '0.0.0',
      });
      receiver.tracing = tracing;
      return {
        options: () => ({ tracing }),
        stop: async () => {
          await tracing.shutdown();
          // OpenTelemetry's globals (provider, context manager, propagator) are the process's.
          trace.disable();
          context.disable();
          propagation.disable();
          server.close();
        },
      };
    },
  },
  {
    name: 'an allow-list',
    params: allowListParams,
    times: 1,
    spyCases: [
      [{ documentId: sha256(LISTED.tids) }, JSON_ONLY, true],
      [{ extensions: persisted(LISTED.tids) }, JSON_ONLY, true],
      [{ documentId: 'not-listed' }, JSON_ONLY, true],
      // A listed subscription is yoga's, its text read before any hook: a 406 for JSON alone.
      [{ documentId: sha256(LISTED.arrivals) }, JSON_ONLY, false],
      [{ documentId: sha256(LISTED.arrivals) }, { accept: '*/*' }, false],
      // The list is read before the Accept: a listed query is not a stream whatever it takes.
      [{ documentId: sha256(LISTED.tids) }, {}, true],
      [{ documentId: 'not-listed' }, {}, true],
    ],
    fixed: ['application/json', JSON_ONLY.accept].map((accept) => ({
      body: JSON.stringify({ documentId: sha256(LISTED.arrivals) }),
      headers: { ...VALID, accept },
    })),
    start: async () => ({
      options: () => ({
        // On, so the listed subscription starts (a stream: no answer in JSON alone).
        live: { pollMs: 60_000 },
        persistedOperations: allowListPlugin(
          new Map(Object.values(LISTED).map((text) => [sha256(text), text])),
        ),
      }),
    }),
  },
];

/** A lane over `test`'s gateway whose only hook counts the answers it writes itself. */
async function spyLane(test: TestGateway) {
  let answered = 0;
  const spy = { onResponse: () => void (answered += 1) };
  const lane = queryLane(test.gateway as unknown as LaneYoga, {
    ...test.gateway.lane,
    maxBodyBytes: 1024,
    hooks: [spy],
  });
  const url = await serve(test, lane);
  return async (body: unknown, headers: Record<string, string> = {}) => {
    const before = answered;
    let json: { data?: unknown } = {};
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...VALID, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const type = response.headers.get('content-type') ?? '';
    // A stream (a subscription's) is left once it started: it would not end.
    if (type.startsWith('text/event-stream')) await response.body?.cancel();
    else if (type.includes('json')) json = (await response.json()) as { data?: unknown };
    else await response.arrayBuffer();
    return { byLane: answered > before, status: response.status, json };
  };
}

for (const config of CONFIGS) {
  describe(`the plain-query lane (${config.name})`, () => {
    let viaLane: string;
    let viaYoga: string;
    let laneSide: TestGateway;
    let yogaSide: TestGateway;
    let stop: (() => Promise<void>) | undefined;
    const arrived: IncomingMessage[] = [];
    const metrics = createMetrics();

    beforeAll(async () => {
      const started = await config.start();
      stop = started.stop;
      const side = (sideMetrics: typeof metrics) =>
        createTestGateway(upstream.url, {
          ...started.options(),
          logger: logs.logger,
          metrics: sideMetrics,
        });
      laneSide = side(metrics);
      yogaSide = side(createMetrics());
      viaLane = await serve(laneSide, laneSide.gateway.listener, arrived);
      viaYoga = await serve(yogaSide, yogaSide.gateway as unknown as TicketedListener);
    });

    afterAll(async () => {
      await laneSide?.close();
      await yogaSide?.close();
      await stop?.();
    });

    const cases = fc.record({
      body: fc.oneof(
        fc.constantFrom<object>(...plainQueries).map((params) => JSON.stringify(params)),
        fc.constantFrom(...config.params).map((params) => JSON.stringify(params)),
        fc.constantFrom(...oddBodies),
      ),
      headers: fc
        .tuple(
          fc.constantFrom<Record<string, string>>(VALID, INVENTED, {}),
          fc.constantFrom(
            undefined,
            '*/*',
            'application/json',
            'application/graphql-response+json',
            'application/graphql-response+json, application/json;q=0.9',
            'application/json, text/event-stream',
            'multipart/mixed, application/*',
            'application/json; charset=iso-8859-1, application/graphql-response+json',
            'application/xml',
          ),
          fc.constantFrom(undefined, 'gzip', 'deflate, gzip;q=0'),
          fc.constantFrom(undefined, 'lane-test-id'),
          fc.constantFrom(undefined, TRACEPARENT),
        )
        .map(([credentials, accept, acceptEncoding, requestId, traceparent]) => ({
          ...credentials,
          ...(accept ? { accept } : {}),
          ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
          ...(requestId ? { 'x-request-id': requestId } : {}),
          ...(traceparent ? { traceparent } : {}),
        })),
    });

    it('answers every request as yoga alone does', async () => {
      for (const sent of config.fixed ?? []) {
        expect(await answer(viaLane, sent)).toEqual(await answer(viaYoga, sent));
      }
      let cached = 0;
      await fc.assert(
        fc.asyncProperty(cases, async (sent) => {
          for (let time = 0; time < config.times; time += 1) {
            const fromLane = await answer(viaLane, sent);
            const fromYoga = await answer(viaYoga, sent);
            expect(fromLane).toEqual(fromYoga);
            if (fromLane.logged.cached) cached += 1;
          }
        }),
        { numRuns: 120 },
      );
      // What the lane read and handed back to yoga went as whatwg-node takes a framework's request
      // (the spy below tells which it handed back): Node's requests are left as they came.
      expect(arrived.filter((request) => 'body' in request)).toEqual([]);
      // With the cache, hits were among the answers compared.
      if (config.times > 1) expect(cached).toBeGreaterThan(0);
    });

    it('runs what it can itself and hands streams and the rest back to yoga', async () => {
      const post = await spyLane(laneSide);
      for (const [body, headers, byLane] of [...commonSpyCases, ...config.spyCases]) {
        const ran = await post(body, headers);
        expect({ body, headers, byLane: ran.byLane }).toEqual({ body, headers, byLane });
        expect(ran.status).toBeLessThan(500);
      }
    });

    if (config.params === apqParams) {
      it('looks an APQ hash up once, whether it answers or hands the request back', async () => {
        const lookups = async () => {
          const counter = metrics.registry.getSingleMetric('sms_apq_requests_total');
          const { values } = (await counter?.get()) ?? { values: [] };
          return values.reduce((sum, { value }) => sum + value, 0);
        };
        // JSON alone, then any type: the lane's either way, as the store tells there is none.
        for (const accept of ['application/json', '*/*']) {
          const before = await lookups();
          const body = JSON.stringify({ extensions: persisted(`never registered (${accept})`) });
          const refused = await answer(viaLane, { body, headers: { ...VALID, accept } });
          expect(refused.status).toBe(404);
          expect(await lookups()).toBe(before + 1);
        }
      });
    }

    if (config.times > 1) {
      it('answers a hit itself, with no call to the service', async () => {
        const post = await spyLane(laneSide);
        const query = { query: '{ ownedNumbers { tid type number } }' };
        const miss = await post(query, JSON_ONLY);
        const calls = upstream.calls.length;
        const hit = await post(query, JSON_ONLY);
        expect(hit).toEqual({ ...miss, byLane: true });
        expect(upstream.calls).toHaveLength(calls);
      });
    }

    if (config.traced) {
      it("continues the caller's trace: the operation span is a child of its traceparent", async () => {
        const post = await spyLane(laneSide);
        const query = { query: 'query LaneTraced { ownedNumbers { tid } }' };
        const ran = await post(query, { ...JSON_ONLY, traceparent: TRACEPARENT });
        expect(ran.byLane).toBe(true);
        await receiver.tracing?.flush();
        const spans = receiver.exports.flatMap((text) =>
          (
            JSON.parse(text) as {
              resourceSpans: {
                scopeSpans: { spans: { name: string; traceId: string; parentSpanId?: string }[] }[];
              }[];
            }
          ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
        );
        const operation = spans.find((span) => span.name === 'query.LaneTraced');
        expect(operation).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
      });
    }

    it('survives a client that leaves before its body ends', async () => {
      const { port } = new URL(viaLane);
      const { connect } = await import('node:net');
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(
        'POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"query"',
      );
      socket.destroy();
      const sent = { body: JSON.stringify(plainQueries[0]), headers: VALID };
      const after = await answer(viaLane, sent);
      expect(after.status).toBeLessThan(500);
      expect(after).toEqual(await answer(viaYoga, sent));
    });
  });
}

describe('the plain-query lane with a stale answer of the response cache', () => {
  it('serves it as yoga does: the Warning header, no ETag', async () => {
    let failing = false;
    const service = await startScriptedUpstream((call) =>
      failing ? { status: 503, text: 'busy' } : accountScript(['TN-1', 'TN-2'])(call),
    );
    // Before the caches are made: they keep the clock they find (Date.now) for an answer's age.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const [laneSide, yogaSide] = [0, 1].map(() => {
      const responseCache = createResponseCache(
        { ttlMs: 60_000, staleIfErrorMs: 600_000, redisUrl: null, hmacKey: null },
        { logger: false },
      );
      return createTestGateway(service.url, { responseCache, logger: logs.logger, timeoutMs: 300 });
    }) as [TestGateway, TestGateway];
    try {
      const viaLane = await serve(laneSide, laneSide.gateway.listener);
      const viaYoga = await serve(yogaSide, yogaSide.gateway as unknown as TicketedListener);
      const sent = { body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }), headers: VALID };
      expect(await answer(viaLane, sent)).toEqual(await answer(viaYoga, sent));
      vi.setSystemTime(Date.now() + 60_000);
      failing = true;
      const fromLane = await answer(viaLane, sent);
      const fromYoga = await answer(viaYoga, sent);
      expect(fromLane.warning).toMatch(/^110 /);
      expect(fromLane.body.extensions.stale.ageMs).toBeGreaterThanOrEqual(60_000);
      // Each side's copy is as old as its own store made it: the ages alone may differ.
      for (const stale of [fromLane, fromYoga]) stale.body.extensions.stale.ageMs = 'its age';
      expect(fromLane).toEqual(fromYoga);
    } finally {
      vi.useRealTimers();
      await laneSide.close();
      await yogaSide.close();
      await service.close();
    }
  });
});

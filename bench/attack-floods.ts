/**
 * The floods of the attacks issue, run by bench/floods.ts like the tenancy floods (same stack,
 * warm-up, bystander and result; `npm run soak -- --scenario=<flood>` runs one):
 * - alias-histories: the "4 KB query": one account owning 200 numbers (the bench simulator with
 *   BENCH_SIM_NUMBERS=200), 4 clients each sending, in a loop, 29 aliases of
 *   `history(start: 0, end: 1000) { messages { id body } }` under `ownedNumbers` (1.7 KB as
 *   written here): refused by the cost limit (MAX_QUERY_COST; it costs 5,806,000 items) before
 *   any upstream call;
 * - alias-histories-half: the same at half size (14 aliases), each range cut to 34 messages so the
 *   cost limit admits it (98,200 items of 100,000): what bounds its answer is the response byte
 *   ceiling (MAX_RESPONSE_BYTES, RESPONSE_TOO_LARGE); its 201 upstream calls (one per number, the
 *   aliases' ranges merged, and the number list) are within the per-request limit of 250;
 * - graphiql-reload: 8 clients loading the GraphiQL page and every file it references, as a first
 *   visit (200s) and as a reload sending the ETags back (304s);
 * - idle-invented-ws: 1,000 WebSocket clients, each opening a connection with an invented pair in
 *   `connection_init` and staying idle, reconnecting with a new pair once closed; meanwhile a real
 *   account opens a WebSocket and subscribes, once a second;
 * - slow-headers: 2,000 TCP connections sending a request line, then one header byte a second,
 *   against a gateway whose open-file limit is 1,024 (so its connection cap, 640, lies within
 *   them); meanwhile a new client opens a connection for one request every 500 ms. It lasts at
 *   least 12 s, so the 10 s headers timeout fires within it.
 */
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Client, request } from 'undici';
import WebSocket from 'ws';
import { benchCredentials } from '../support/bench-accounts.js';
import type { FloodContext, FloodPlan, UpstreamCalls } from './floods.js';
import { basic } from './load.js';

export const ATTACK_FLOODS = [
  'alias-histories',
  'alias-histories-half',
  'graphiql-reload',
  'idle-invented-ws',
  'slow-headers',
] as const;
type AttackFlood = (typeof ATTACK_FLOODS)[number];

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const count = (tally: Record<string, number>, key: string, by = 1): void => {
  tally[key] = (tally[key] ?? 0) + by;
};
const listed = (tally: Record<string, number>): string =>
  Object.entries(tally)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'none';

// ------------------------------------------------------------------------- alias-histories

/** The flooding account: with BENCH_SIM_NUMBERS=200 every bench account owns 200 numbers. */
const ALIAS_ACCOUNT = benchCredentials(1);
const ALIAS_NUMBERS = 200;
/** The most the default MAX_ALIASES (30) lets through, as in the issue's attack. */
const FULL_ALIASES = 29;
const HALF_ALIASES = 14;
/**
 * The widest range the cost limit admits at 14 aliases: `ownedNumbers` is charged 200 (its
 * assumed size), and each alias 200 x (1 History + 34 messages), so 200 + 14 x 7,000 = 98,200 of
 * the default MAX_QUERY_COST of 100,000; `end: 35` would cost 101,000.
 */
const HALF_END = 34;

function aliasQuery(aliases: number, end: number): string {
  const fields = Array.from(
    { length: aliases },
    (_, i) => `h${i}: history(start: 0, end: ${end}) { messages { id body } }`,
  );
  return `{ ownedNumbers { ${fields.join(' ')} } }`;
}
const FULL_QUERY = aliasQuery(FULL_ALIASES, 1000);
const HALF_QUERY = aliasQuery(HALF_ALIASES, HALF_END);

/** What the half-size answers weighed, as sent (bytes of the JSON body). */
const halfAnswers = { count: 0, bytes: 0, maxBytes: 0, complete: 0 };

/** The error codes of an answer, distinct and sorted ("data" when it has none). */
function codesOf(text: string): string {
  const codes = new Set([...text.matchAll(/"code":"([A-Z_]+)"/g)].map((m) => m[1] ?? ''));
  if (codes.size === 0) return text.includes('"errors"') ? 'error' : 'data';
  return [...codes].sort().join('+');
}

async function aliasRequest(
  gatewayUrl: string,
  query: string,
): Promise<{ status: number; text: string }> {
  const response = await request(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: basic(ALIAS_ACCOUNT.sysId, ALIAS_ACCOUNT.authToken),
    },
    body: JSON.stringify({ query }),
  });
  return { status: response.statusCode, text: await response.body.text() };
}

/** The flooding account's upstream calls during the flood, by operation. */
function aliasAccountCalls(calls: UpstreamCalls): Record<string, number> {
  const mine: Record<string, number> = {};
  for (const [key, made] of Object.entries(calls.byAccount)) {
    if (key.startsWith(`${ALIAS_ACCOUNT.sysId} `)) {
      mine[key.slice(ALIAS_ACCOUNT.sysId.length + 1)] = made;
    }
  }
  return mine;
}

/** Both aliased-history floods: 4 clients of an account owning ALIAS_NUMBERS numbers. */
const ALIAS_FLOOD = {
  env: {},
  simulatorEnv: { BENCH_SIM_NUMBERS: String(ALIAS_NUMBERS) },
  workers: 4,
};

const aliasHistories: FloodPlan = {
  ...ALIAS_FLOOD,
  async worker({ gatewayUrl }) {
    const { status, text } = await aliasRequest(gatewayUrl, FULL_QUERY);
    return `HTTP ${status} ${codesOf(text)}`;
  },
  async after(_context, outcomes, calls) {
    const mine = aliasAccountCalls(calls);
    const failures: string[] = [];
    const made = Object.values(mine).reduce((sum, n) => sum + n, 0);
    // A pair this copy has no verdict on is verified (one ownednumbers call, remembered for
    // minutes) before its request waits a turn: that call is the account's, not the query's.
    const verifications = Math.min(mine['ownednumbers'] ?? 0, 1);
    if (made > verifications)
      failures.push(`the refused queries caused ${made} upstream calls (${listed(mine)})`);
    const admitted = Object.keys(outcomes).filter((o) => !o.includes('GRAPHQL_VALIDATION_FAILED'));
    if (admitted.length > 0)
      failures.push(`answers not refused by the cost limit: ${admitted.join(', ')}`);
    return {
      notes: [
        `the query: ${Buffer.byteLength(FULL_QUERY)} bytes, ${FULL_ALIASES} aliases of history(start: 0, end: 1000) under ownedNumbers, an account owning ${ALIAS_NUMBERS} numbers; its upstream calls during the flood: ${made} (${listed(mine)})`,
      ],
      failures,
    };
  },
};

const aliasHistoriesHalf: FloodPlan = {
  ...ALIAS_FLOOD,
  async worker({ gatewayUrl }) {
    const { status, text } = await aliasRequest(gatewayUrl, HALF_QUERY);
    const bytes = Buffer.byteLength(text);
    halfAnswers.count += 1;
    halfAnswers.bytes += bytes;
    halfAnswers.maxBytes = Math.max(halfAnswers.maxBytes, bytes);
    const codes = codesOf(text);
    if (codes === 'data') halfAnswers.complete += 1;
    return `HTTP ${status} ${codes}`;
  },
  async after(_context, outcomes, calls) {
    const mine = aliasAccountCalls(calls);
    const made = Object.values(mine).reduce((sum, n) => sum + n, 0);
    const answered = Object.entries(outcomes)
      .filter(([o]) => !o.startsWith('client error'))
      .reduce((sum, [, n]) => sum + n, 0);
    const failures: string[] = [];
    const unbounded = Object.keys(outcomes).filter((o) => !o.includes('RESPONSE_TOO_LARGE'));
    if (unbounded.length > 0) {
      failures.push(`answers without RESPONSE_TOO_LARGE: ${unbounded.join(', ')}`);
    }
    return {
      notes: [
        `the query: ${Buffer.byteLength(HALF_QUERY)} bytes, ${HALF_ALIASES} aliases of history(start: 0, end: ${HALF_END}) under ownedNumbers (cost 98,200 of 100,000); answers ${(halfAnswers.bytes / Math.max(1, halfAnswers.count) / 1e6).toFixed(2)} MB on average, at most ${(halfAnswers.maxBytes / 1e6).toFixed(2)} MB, ${halfAnswers.complete} complete`,
        `the flooding account's upstream calls: ${made} (${listed(mine)}), ${(made / Math.max(1, answered)).toFixed(0)} per answered request`,
      ],
      failures,
    };
  },
};

// ------------------------------------------------------------------------- graphiql-reload

/** What the page loads so far brought: statuses, and bytes on the wire (bodies as sent). */
const graphiql = {
  statuses: {} as Record<string, number>,
  firstVisits: { loads: 0, bytes: 0 },
  reloads: { loads: 0, bytes: 0 },
  /** Each file's ETag as last served (the page's under its path too): a browser's cache. */
  etags: new Map<string, string>(),
  /** The files the page references, from its HTML. */
  files: [] as string[],
  unexpected: {} as Record<string, number>,
};

const BROWSER = { 'accept-encoding': 'gzip, br', 'user-agent': 'bench graphiql-reload' };

/** One GET as a browser sends it; the body is counted, not kept (the script is 1.3 MB). */
async function browserGet(
  url: string,
  accept: string,
  etag: string | undefined,
): Promise<{ status: number; bytes: number; etag: string | undefined; html: string }> {
  const response = await request(url, {
    headers: { ...BROWSER, accept, ...(etag ? { 'if-none-match': etag } : {}) },
  });
  let bytes = 0;
  const chunks: Buffer[] = [];
  const isHtml = String(response.headers['content-type'] ?? '').startsWith('text/html');
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (isHtml) chunks.push(chunk);
  }
  const tag = response.headers.etag;
  let html = '';
  if (isHtml) {
    const body = Buffer.concat(chunks);
    const encoding = response.headers['content-encoding'];
    html = decoded(body, typeof encoding === 'string' ? encoding : undefined);
  }
  return {
    status: response.statusCode,
    bytes,
    etag: typeof tag === 'string' ? tag : undefined,
    html,
  };
}

function decoded(body: Buffer, encoding: string | undefined): string {
  if (encoding === 'br') return brotliDecompressSync(body).toString();
  if (encoding === 'gzip') return gunzipSync(body).toString();
  return body.toString();
}

/** One page load: the page, then each file it references; a reload sends the ETags back. */
async function loadGraphiQL(gatewayUrl: string, reload: boolean): Promise<string> {
  const statuses: Record<string, number> = {};
  let bytes = 0;
  const pageUrl = `${gatewayUrl}/graphql`;
  const page = await browserGet(
    pageUrl,
    'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    reload ? graphiql.etags.get(pageUrl) : undefined,
  );
  count(statuses, String(page.status));
  bytes += page.bytes;
  if (page.etag) graphiql.etags.set(pageUrl, page.etag);
  if (page.html) {
    // The files the page names: its stylesheet, favicon and scripts, under /graphql/graphiql/.
    graphiql.files = [...page.html.matchAll(/(?:src|href)="(\/graphql\/graphiql\/[^"]+)"/g)].map(
      (m) => m[1] ?? '',
    );
  }
  await Promise.all(
    graphiql.files.map(async (path) => {
      const url = `${gatewayUrl}${path}`;
      const file = await browserGet(url, '*/*', reload ? graphiql.etags.get(url) : undefined);
      count(statuses, String(file.status));
      bytes += file.bytes;
      if (file.etag) graphiql.etags.set(url, file.etag);
    }),
  );
  const kind = reload ? 'reload' : 'first visit';
  const totals = reload ? graphiql.reloads : graphiql.firstVisits;
  totals.loads += 1;
  totals.bytes += bytes;
  for (const [status, n] of Object.entries(statuses)) {
    count(graphiql.statuses, status, n);
    if (status !== (reload ? '304' : '200')) count(graphiql.unexpected, `${kind} ${status}`, n);
  }
  return `${kind}: ${Object.entries(statuses)
    .map(([status, n]) => `${n}x${status}`)
    .join('+')}`;
}

const graphiqlReload: FloodPlan = {
  env: {},
  workers: 8,
  async worker({ gatewayUrl, next }) {
    // Every other load is a reload, once a first visit has given the files and their ETags.
    const reload = next() % 2 === 0 && graphiql.files.length > 0;
    return loadGraphiQL(gatewayUrl, reload);
  },
  // A first visit, which builds and compresses the files (once per process) before the baseline
  // is read, and a reload; the tallies then start afresh.
  async warmUp({ gatewayUrl }) {
    await loadGraphiQL(gatewayUrl, false);
    await loadGraphiQL(gatewayUrl, true);
    graphiql.statuses = {};
    graphiql.firstVisits = { loads: 0, bytes: 0 };
    graphiql.reloads = { loads: 0, bytes: 0 };
    graphiql.unexpected = {};
  },
  async after() {
    const perLoad = (t: { loads: number; bytes: number }) =>
      `${(t.bytes / Math.max(1, t.loads) / 1e3).toFixed(1)} kB`;
    const failures: string[] = [];
    if (Object.keys(graphiql.unexpected).length > 0) {
      failures.push(`unexpected statuses: ${listed(graphiql.unexpected)}`);
    }
    return {
      notes: [
        `page loads (the page and its ${graphiql.files.length} files): ${graphiql.firstVisits.loads} first visits, ${perLoad(graphiql.firstVisits)} of bodies each (brotli); ${graphiql.reloads.loads} reloads, ${perLoad(graphiql.reloads)} each; responses ${listed(graphiql.statuses)}`,
      ],
      failures,
    };
  },
};

// ------------------------------------------------------------------------- idle-invented-ws

/** Clients, each keeping one connection of an invented pair open; opened 100 every 100 ms. */
const WS_CLIENTS = 1_000;
const WS_BATCH = 100;
const WS_BATCH_MS = 100;
/** Connections in all, whatever the flood's length. */
const WS_MAX_CONNECTIONS = 30_000;
/** The real account that subscribes while the flood runs (neither the bystander nor the flood). */
const WS_REAL_ACCOUNT = benchCredentials(2);
const ws = { opened: 0, acked: 0 };

const wsUrl = (gatewayUrl: string) => `${gatewayUrl.replace(/^http/, 'ws')}/graphql`;

/**
 * One connection: `connection_init` with `params`, then idle until the gateway closes it or
 * `until` (performance.now()); resolves with what ended it. With `subscribe`, once acknowledged it
 * also subscribes and reports whether the subscription stood for a second.
 */
function webSocketSession(
  gatewayUrl: string,
  params: Record<string, string>,
  until: number,
  subscribe = false,
): Promise<{ outcome: string; acked: boolean; ackMs: number | null }> {
  return new Promise((resolve) => {
    const opened = performance.now();
    let acked = false;
    let ackMs: number | null = null;
    let settled = false;
    const socket = new WebSocket(wsUrl(gatewayUrl), ['graphql-transport-ws']);
    const finish = (outcome: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ outcome, acked, ackMs });
      if (socket.readyState === WebSocket.OPEN) socket.close(1000);
      else socket.terminate();
    };
    const timer = setTimeout(
      () => finish(acked ? 'still open at the end, acknowledged' : 'still open at the end'),
      until - opened,
    );
    socket.on('open', () =>
      socket.send(JSON.stringify({ type: 'connection_init', payload: params })),
    );
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { type?: string };
      if (message.type === 'connection_ack') {
        acked = true;
        ackMs = performance.now() - opened;
        if (!subscribe) return;
        socket.send(
          JSON.stringify({
            id: '1',
            type: 'subscribe',
            payload: { query: 'subscription { messageAdded(tids: ["TN-L-0001"]) { id } }' },
          }),
        );
        setTimeout(() => finish('acknowledged, subscribed'), 1_000);
      } else if (message.type === 'error' || message.type === 'complete') {
        finish(`acknowledged, subscription ${message.type}: ${data.toString().slice(0, 120)}`);
      }
    });
    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      finish(`HTTP ${response.statusCode}`);
    });
    socket.on('error', () => undefined);
    socket.on('close', (code) => finish(`close ${code}${acked ? ' after ack' : ''}`));
  });
}

async function inventedSession(context: FloodContext): Promise<string> {
  const n = context.next();
  const session = await webSocketSession(
    context.gatewayUrl,
    { 'x-sys-id': `AC-made-up-${n}`, 'x-auth-token': `tok-${n}` },
    context.deadline(),
  );
  if (session.acked) ws.acked += 1;
  return session.outcome;
}

const idleInventedWs: FloodPlan = {
  env: {},
  workers: WS_CLIENTS,
  async worker(context) {
    const slot = ws.opened;
    ws.opened += 1;
    if (slot >= WS_MAX_CONNECTIONS) {
      await sleep(context.deadline() - performance.now());
      return null;
    }
    // The first round opens in batches; after it, each client reconnects as soon as it is closed.
    if (slot < WS_CLIENTS) await sleep(Math.floor(slot / WS_BATCH) * WS_BATCH_MS);
    return inventedSession(context);
  },
  async warmUp(context) {
    await Promise.all([inventedSession(context), inventedSession(context)]);
    ws.acked = 0;
  },
  async during({ gatewayUrl, deadline }) {
    // A real account's WebSocket once a second, while the invented ones keep coming.
    const outcomes: Record<string, number> = {};
    const ackTimes: number[] = [];
    while (performance.now() < deadline() - 2_500) {
      const started = performance.now();
      const session = await webSocketSession(
        gatewayUrl,
        { 'x-sys-id': WS_REAL_ACCOUNT.sysId, 'x-auth-token': WS_REAL_ACCOUNT.authToken },
        started + 6_000,
        true,
      );
      count(outcomes, session.outcome);
      if (session.ackMs !== null) ackTimes.push(session.ackMs);
      await sleep(started + 1_000 - performance.now());
    }
    const failures: string[] = [];
    const refused = Object.entries(outcomes).filter(([o]) => o !== 'acknowledged, subscribed');
    if (refused.length > 0) {
      failures.push(`the real account's WebSocket: ${listed(Object.fromEntries(refused))}`);
    }
    return {
      notes: [
        `a real account's WebSocket (connection_init, then a subscription) during the flood: ${listed(outcomes)}; ` +
          (ackTimes.length === 0
            ? 'never acknowledged'
            : `connection_ack after ${median(ackTimes).toFixed(0)} ms (median), ${Math.max(...ackTimes).toFixed(0)} ms at most`),
      ],
      failures,
    };
  },
  async after(_context, outcomes, calls) {
    const refusedCalls = Object.entries(calls.byAccount)
      .filter(([key]) => key.startsWith('refused '))
      .reduce((sum, [, n]) => sum + n, 0);
    const pairs = Object.values(outcomes).reduce((sum, n) => sum + n, 0);
    const closed4403 = outcomes['close 4403'] ?? 0;
    const failures: string[] = [];
    if (ws.acked > 0) failures.push(`${ws.acked} invented pairs got a connection_ack`);
    if (refusedCalls > pairs) {
      failures.push(`${refusedCalls} verification calls for ${pairs} invented pairs`);
    }
    return {
      notes: [
        `invented pairs: ${pairs} connections, ${closed4403} of them closed 4403 after their connection_init; ${refusedCalls} calls to the service with invented pairs (${(refusedCalls / Math.max(1, closed4403)).toFixed(2)} per pair closed 4403); acknowledged: ${ws.acked}`,
      ],
      failures,
    };
  },
};

// ------------------------------------------------------------------------- slow-headers

/** Slow connections in all; opened 200 every 100 ms, so all within the first second. */
const SLOW_SOCKETS = 2_000;
const SLOW_BATCH = 200;
const SLOW_BATCH_MS = 100;
/**
 * The gateway's open-file limit, soft and hard (Node raises the soft one to the hard one at
 * start): 1,024, a common default. Its connection cap is what that leaves after the service's pool
 * (256) and 128 kept back: 640. With this machine's 20,000 the cap is 19,616, which 2,000
 * connections never reach.
 */
const SLOW_GATEWAY_OPEN_FILES = 1_024;
/** The headers timeout (src/http/connections.ts HEADERS_TIMEOUT_MS, checked every second), and slack. */
const SLOW_EXPECTED_CLOSE_MS = 10_000 + 1_000 + 1_000;
const slow = { opened: 0, lifetimes: {} as Record<string, number[]>, oldestOpenMs: 0 };

/**
 * One slow client: a request line, then a header one byte a second, until the gateway answers
 * or closes, or until `until`; resolves with what the gateway did.
 */
function slowConnection(gatewayUrl: string, until: number): Promise<string> {
  const { hostname, port } = new URL(gatewayUrl);
  return new Promise((resolve) => {
    const opened = performance.now();
    let answer = '';
    let failure = '';
    let settled = false;
    let trickle: NodeJS.Timeout | undefined;
    const socket = connect({ host: hostname, port: Number(port) });
    const finish = (outcome: string) => {
      if (settled) return;
      settled = true;
      clearInterval(trickle);
      clearTimeout(timer);
      (slow.lifetimes[outcome] ??= []).push(performance.now() - opened);
      resolve(outcome);
      socket.destroy();
    };
    const timer = setTimeout(() => {
      slow.oldestOpenMs = Math.max(slow.oldestOpenMs, performance.now() - opened);
      finish('still open at the end');
    }, until - opened);
    socket.setNoDelay(true);
    socket.on('connect', () => {
      socket.write('GET /graphql HTTP/1.1\r\n');
      const header = `X-Slow: ${'a'.repeat(64)}`;
      let next = 0;
      trickle = setInterval(() => {
        socket.write(header.charAt(next % header.length));
        next += 1;
      }, 1_000);
    });
    socket.on('data', (chunk: Buffer) => {
      if (answer.length < 32) answer += chunk.toString('latin1');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      failure = error.code ?? error.message;
    });
    socket.on('close', () => {
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1];
      finish(
        status ? `HTTP ${status}` : failure ? `closed: ${failure}` : 'closed without an answer',
      );
    });
  });
}

/** The gateway's open file descriptors (sockets included), from /proc. */
function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

const slowHeaders: FloodPlan = {
  env: {},
  gatewayOpenFiles: SLOW_GATEWAY_OPEN_FILES,
  minSeconds: 12,
  workers: SLOW_SOCKETS,
  async worker({ gatewayUrl, deadline }) {
    const slot = slow.opened;
    slow.opened += 1;
    if (slot >= SLOW_SOCKETS) {
      // One connection per client: the rest of the flood is spent waiting.
      await sleep(deadline() - performance.now());
      return null;
    }
    await sleep(Math.floor(slot / SLOW_BATCH) * SLOW_BATCH_MS);
    return slowConnection(gatewayUrl, deadline());
  },
  // Twenty slow connections for a second: the same path, without a 10 s wait.
  async warmUp({ gatewayUrl }) {
    const until = performance.now() + 1_000;
    await Promise.all(Array.from({ length: 20 }, () => slowConnection(gatewayUrl, until)));
    slow.lifetimes = {};
    slow.oldestOpenMs = 0;
  },
  async during({ gatewayUrl, stack, deadline }) {
    // A new client every 500 ms: one request on a connection of its own (the bystander keeps
    // the one it opened before the flood).
    const timeline: string[] = [];
    const outcomes: Record<string, number> = {};
    let peakFiles = 0;
    const started = performance.now();
    while (performance.now() < deadline() - 500) {
      const at = performance.now();
      peakFiles = Math.max(peakFiles, openFiles(stack.gateway.pid));
      const client = new Client(gatewayUrl, { pipelining: 0 });
      let outcome: string;
      try {
        const response = await client.request({
          method: 'GET',
          path: '/health',
          headersTimeout: 2_000,
          bodyTimeout: 2_000,
        });
        await response.body.text();
        outcome = `HTTP ${response.statusCode}`;
      } catch (error) {
        outcome = `error ${(error as { code?: string }).code ?? String(error).slice(0, 40)}`;
      } finally {
        await client.destroy();
      }
      count(outcomes, outcome);
      timeline.push(`${((at - started) / 1000 + 1).toFixed(1)} s ${outcome.replace('HTTP ', '')}`);
      await sleep(at + 500 - performance.now());
    }
    return {
      notes: [
        `a new client's request (GET /health on a connection of its own) every 500 ms: ${listed(outcomes)}; in order: ${timeline.join(', ')}`,
        `the gateway's open file descriptors at most ${peakFiles} (open-file limit ${SLOW_GATEWAY_OPEN_FILES}, connection cap ${SLOW_GATEWAY_OPEN_FILES - 256 - 128})`,
      ],
      failures: [],
    };
  },
  async after(_context, outcomes) {
    const lifetimes = Object.entries(slow.lifetimes)
      .map(([outcome, times]) => `${outcome} after ${(median(times) / 1000).toFixed(1)} s`)
      .join(', ');
    const stillOpen = outcomes['still open at the end'] ?? 0;
    const failures: string[] = [];
    if (slow.oldestOpenMs > SLOW_EXPECTED_CLOSE_MS) {
      failures.push(
        `${stillOpen} slow connections still open at the end, the oldest for ${(slow.oldestOpenMs / 1000).toFixed(1)} s`,
      );
    }
    return {
      notes: [
        `slow connections: ${SLOW_SOCKETS} opened, ${stillOpen} still open at the end (closed by the bench); median lifetime by outcome: ${lifetimes}`,
      ],
      failures,
    };
  },
};

export const ATTACK_PLANS: Record<AttackFlood, FloodPlan> = {
  'alias-histories': aliasHistories,
  'alias-histories-half': aliasHistoriesHalf,
  'graphiql-reload': graphiqlReload,
  'idle-invented-ws': idleInventedWs,
  'slow-headers': slowHeaders,
};

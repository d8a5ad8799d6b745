/**
 * The floor any Node gateway can reach: a plain node:http server that answers each bench
 * scenario with the same upstream calls the gateway makes, over the same undici pool settings,
 * with no GraphQL. Its work per request is only what no gateway can skip: read the request,
 * decode the credentials, call upstream, JSON.parse the answer, JSON.stringify a reply.
 *
 * Routes (POST, JSON body):
 *   /owned   allownednumbers                          -> tid and number of each
 *   /pages   allownednumbers, then smshistory for each of `pages: [{tid, start, end}]`
 *   /fanout  allownednumbers, then smshistory on each -> every number's page {start, end}
 * History calls run at most BENCH_CONCURRENCY at a time, as under the gateway's cap.
 * Run as a child of bench/run.ts: UPSTREAM_URL is the simulator; it reports `ready` over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUpstreamPool } from '../src/upstream/client.js';

interface OwnedNumber {
  tid: string;
  number: string;
  type: string;
  webhook: string;
}
type Json = Record<string, unknown>;

const upstream = new URL(process.env.UPSTREAM_URL ?? '');
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const pool = createUpstreamPool(upstream, {
  connections: Number(process.env.UPSTREAM_CONNECTIONS ?? 256),
  timeoutMs: 10_000,
});

async function call(operation: string, credentials: string, params: string): Promise<Json> {
  const response = await pool.request({
    method: 'POST',
    path: `/api/${operation}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: `${credentials}${params}`,
  });
  const json = (await response.body.json()) as Json;
  if (response.statusCode !== 200 || json.success !== '1') {
    throw new Error(`${operation} answered ${response.statusCode}`);
  }
  return json;
}

function history(credentials: string, n: OwnedNumber, start: number, end: number): Promise<Json> {
  const params = new URLSearchParams({
    tid: n.tid,
    number: n.number,
    history_start: String(start),
    history_end: String(end),
  });
  return call('smshistory', credentials, `&${params.toString()}`);
}

async function owned(credentials: string): Promise<OwnedNumber[]> {
  return (await call('allownednumbers', credentials, '')).data as OwnedNumber[];
}

/** Runs `task` on every item, at most `limit` at once, keeping order. */
async function mapLimited<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>) {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function answer(path: string, credentials: string, body: Json): Promise<unknown> {
  const start = Number(body.start ?? 0);
  const end = Number(body.end ?? 0);
  switch (path) {
    case '/owned':
      return {
        ownedNumbers: (await owned(credentials)).map((n) => ({ tid: n.tid, number: n.number })),
      };
    case '/pages': {
      const numbers = await owned(credentials);
      const wanted = (body.pages ?? []) as { tid: string; start: number; end: number }[];
      return {
        pages: await mapLimited(wanted, concurrency, async (page) => {
          const n = numbers.find((x) => x.tid === page.tid);
          return n ? { ...n, history: await history(credentials, n, page.start, page.end) } : null;
        }),
      };
    }
    case '/fanout': {
      const numbers = await owned(credentials);
      const pages = await mapLimited(numbers, concurrency, (n) =>
        history(credentials, n, start, end),
      );
      return { ownedNumbers: numbers.map((n, i) => ({ tid: n.tid, history: pages[i] })) };
    }
    default:
      return undefined;
  }
}

function formCredentials(authorization: string | undefined): string | null {
  const match = /^Basic (.+)$/.exec(authorization ?? '');
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return new URLSearchParams({
    sys_id: decoded.slice(0, colon),
    auth_token: decoded.slice(colon + 1),
  }).toString();
}

function reply(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const credentials = formCredentials(req.headers.authorization);
    if (credentials === null) return reply(res, 401, { error: 'credentials required' });
    let body: Json;
    try {
      body = (chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {}) as Json;
    } catch {
      return reply(res, 400, { error: 'body is not JSON' });
    }
    answer(req.url ?? '/', credentials, body).then(
      (data) =>
        data === undefined ? reply(res, 404, { error: 'not found' }) : reply(res, 200, { data }),
      (error: unknown) => reply(res, 502, { error: String(error) }),
    );
  });
}

const server = createServer(onRequest);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` });
});
process.once('SIGTERM', () => {
  server.close(() => void pool.close().then(() => process.exit(0)));
  server.closeAllConnections();
});

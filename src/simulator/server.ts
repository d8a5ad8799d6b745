/**
 * The stand-in for the SMS service: an HTTP server on 127.0.0.1 speaking its wire format (as
 * src/upstream/wire.ts reads it) over ./demo-data.ts. Where the service's documentation is open:
 * - Parameters come from the form body and the query string, the body winning; within one, the
 *   first of a repeated parameter wins. A non-empty body of another content type is 415.
 * - Positions count from 0, newest first; `history_start` is inclusive, `history_end` exclusive
 *   (or inclusive with `historyEnd: 'inclusive'`, as a real service might be). A range past the
 *   end returns what exists; `message_count_requested ` counts the positions the range names.
 * - A number without messages has `most_recent_msg_id` 0 and `most_recent_date` = `created_date`.
 * - 404 unknown path, 405 not POST, 401 bad credentials (checked first), 400 bad parameters (end <
 *   start too), 413 a body over 64 KiB; a tid not the account's, or a `number` not the tid's, is
 *   200 with `{"success":"0","error":"number not found"}`. Errors never echo a parameter's value.
 * - `latencyMs` delays every answer, errors included, from when the request body has been read.
 * - A message arriving on a number whose `webhook` is a loopback http(s) URL rings it: a POST with
 *   a small JSON event (the service's own format is not documented; the gateway reads none of it).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

import type { UpstreamOperation as SimulatorOperation } from '../core/signals.js';
import { DEMO_ACCOUNT, DEMO_ACCOUNTS, formatUpstreamTimestamp } from './demo-data.js';
import type { DemoAccount, DemoMessage, DemoNumber, DemoNumberType } from './demo-data.js';

export type { UpstreamOperation as SimulatorOperation } from '../core/signals.js';

/** One request as answered, before its answer waits out the latency and is written. */
export interface AnsweredRequest {
  /** null for a path that is none of the three operations (answered 404). */
  readonly operation: SimulatorOperation | null;
  /** sys_id of the authenticated account; null when the credentials were not accepted. */
  readonly accountSysId: string | null;
  /** Request parameters (query + body, body winning), the credentials among them. */
  readonly params: ReadonlyMap<string, string>;
  readonly status: number;
}

/** Sees every answer (support/recording-upstream.ts records them and slows them under load). */
export interface SimulatorObserver {
  /** An answer is decided; returns how many ms it waits beyond `latencyMs`. */
  answering(request: AnsweredRequest): number;
  /** That answer's wait is over: it is written now (or dropped, its client gone). */
  written(): void;
}

export interface SimulatorOptions {
  /** Artificial delay before each answer; default 0. */
  latencyMs?: number;
  /** Accounts answered beside the demo ones; those sharing one `numbers` array share its JSON. */
  accounts?: Iterable<DemoAccount>;
  observer?: SimulatorObserver;
  /** Every this many ms an inbound message arrives on the demo account's first number; 0 never. */
  arrivalsEveryMs?: number;
  /** How `history_end` is read: `exclusive` ([start, end), the default) or `inclusive`. */
  historyEnd?: 'exclusive' | 'inclusive';
}

export interface RunningSimulator {
  /** base_url, e.g. 'http://127.0.0.1:43121' (no trailing slash). */
  url: string;
  /** An inbound message arrives at the head of `tid`'s history (of the account `sysId`). */
  deliver(sysId: string, tid: string, body: string): DemoMessage;
  /** Sets the webhook of every number to `urlOf(tid)`, as an operator would: of one account, or all. */
  setWebhooks(urlOf: (tid: string) => string, sysId?: string): void;
  /** Closes the server and all keep-alive sockets. */
  close(): Promise<void>;
}

type PreparedNumber = ReturnType<typeof prepareNumber>;

interface PreparedAccount {
  readonly account: DemoAccount;
  readonly byTid: ReadonlyMap<string, PreparedNumber>;
  /** The ownednumbers answers by number_type, and the allownednumbers answer. */
  readonly owned: Readonly<Record<DemoNumberType | 'all', Buffer>>;
}

function ownedNumbersBody(numbers: readonly DemoNumber[]): Buffer {
  const data = numbers.map(({ number, tid, type, webhook }) => ({ number, tid, type, webhook }));
  return Buffer.from(JSON.stringify({ success: '1', data }));
}

function integerJson(value: number, loose: boolean): string {
  return loose ? `"${value}"` : String(value);
}

function prepareNumber(n: DemoNumber) {
  const newest = n.messages[0];
  const mostRecentId = newest === undefined ? 0 : Number(newest.system_id);
  const mostRecentDate = newest === undefined ? n.createdDate : newest.GMTdate;
  // Everything after the requested count, up to the messages.
  const middle =
    `,"total_message_count":${integerJson(n.messages.length, n.looselyTyped)}` +
    `,"created_date":${JSON.stringify(n.createdDate)}` +
    `,"most_recent_msg_id":${integerJson(mostRecentId, n.looselyTyped)}` +
    `,"most_recent_date":${JSON.stringify(mostRecentDate)}` +
    `,"tid":${JSON.stringify(n.tid)}` +
    `,"number":${JSON.stringify(n.number)}` +
    `,"optin":${JSON.stringify(n.optin)}` +
    `,"messages":[`;
  const parts = n.messages.map((m) => JSON.stringify(m));
  // Message i spans [offsets[i], offsets[i + 1] - 1) of messagesJson (newest first, joined by ',').
  let offset = 0;
  const offsets = [0, ...parts.map((part) => (offset += Buffer.byteLength(part) + 1))];
  return { demo: n, messagesJson: Buffer.from(parts.join(',')), offsets, middle };
}

/** Prepared JSON by numbers array: accounts owning the same array share it. */
const preparedNumbers = new WeakMap<readonly DemoNumber[], Omit<PreparedAccount, 'account'>>();

function prepareAccount(account: DemoAccount): PreparedAccount {
  const { numbers } = account;
  const prepared = preparedNumbers.get(numbers) ?? {
    byTid: new Map(numbers.map((n) => [n.tid, prepareNumber(n)])),
    owned: {
      local: ownedNumbersBody(numbers.filter((n) => n.type === 'local')),
      tollfree: ownedNumbersBody(numbers.filter((n) => n.type === 'tollfree')),
      all: ownedNumbersBody(numbers),
    },
  };
  preparedNumbers.set(numbers, prepared);
  return { account, ...prepared };
}

/** A new inbound message at the head of `number`'s history, dated now, after every seeded one. */
function arrivingMessage(number: DemoNumber, body: string): DemoMessage {
  const newest = number.messages[0];
  const systemId = newest === undefined ? 1 : Number(newest.system_id) + 1;
  return {
    system_id: number.looselyTyped ? String(systemId) : systemId,
    message_id: randomBytes(16).toString('hex'),
    GMTdate: formatUpstreamTimestamp(Math.floor(Date.now() / 1000)),
    tid: number.tid,
    phone: newest?.phone ?? '15550100000',
    direction: 'inbound',
    body,
    mms: 'no',
    mms_url: '',
    status: '200 Message received',
  };
}

const HISTORY_TAIL = Buffer.from(']}');

/** A history answer: its own head, a view of the prepared JSON of [start, end), then ']}'. */
function historyBody(prepared: PreparedNumber, start: number, end: number): Buffer[] {
  const loose = prepared.demo.looselyTyped;
  const head = Buffer.from(
    `{"success":"1","message_count_requested ":${integerJson(end - start, loose)}` +
      prepared.middle,
  );
  const total = prepared.demo.messages.length;
  const from = Math.min(start, total);
  const to = Math.min(end, total);
  if (to <= from) return [head, HISTORY_TAIL];
  const sliceStart = prepared.offsets[from] ?? 0;
  const sliceEnd = (prepared.offsets[to] ?? 1) - 1;
  return [head, prepared.messagesJson.subarray(sliceStart, sliceEnd), HISTORY_TAIL];
}

const MAX_BODY_BYTES = 64 * 1024;
/** A ring the gateway has not answered in this long is dropped. */
const RING_TIMEOUT_MS = 2_000;
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `webhook` as a URL when it is an http(s) URL on this machine; else null (never called). */
function loopbackUrl(webhook: string): URL | null {
  if (!URL.canParse(webhook)) return null;
  const url = new URL(webhook);
  const http = url.protocol === 'http:' || url.protocol === 'https:';
  return http && LOOPBACK_HOSTS.has(url.hostname) ? url : null;
}
const UNSUPPORTED_MEDIA_TYPE =
  'unsupported content type; send parameters as application/x-www-form-urlencoded';

const OPERATIONS: ReadonlyMap<string, SimulatorOperation> = new Map(
  (['smshistory', 'ownednumbers', 'allownednumbers'] as const).map((op) => [`/api/${op}`, op]),
);

interface Outcome {
  readonly status: number;
  /** Sent as consecutive chunks of one body. */
  readonly body: readonly Buffer[];
  readonly headers?: Record<string, string>;
  /** The account whose credentials were accepted. */
  readonly accountSysId?: string;
}

/** Sets `params` from `query`, over what is there; the first of a repeated parameter wins. */
function addParams(params: Map<string, string>, query: string): void {
  const search = new URLSearchParams(query);
  for (const key of new Set(search.keys())) params.set(key, search.get(key)!);
}

function isFormContentType(header: string | undefined): boolean {
  const mediaType = (header ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return mediaType === '' || mediaType === 'application/x-www-form-urlencoded';
}

function parseNonNegativeInteger(value: string): number | null {
  const parsed = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(parsed) ? parsed : null;
}

/** `{"success":"0","error":...}` with this status. */
function failure(status: number, error: string, headers?: Record<string, string>): Outcome {
  return { status, body: [Buffer.from(JSON.stringify({ success: '0', error }))], headers };
}

function handleHistory(
  account: PreparedAccount,
  params: Map<string, string>,
  inclusiveEnd: boolean,
): Outcome {
  const number = params.get('number');
  const tid = params.get('tid');
  const rawStart = params.get('history_start');
  const rawEnd = params.get('history_end');
  if (!number) return failure(400, 'missing parameter: number');
  if (!tid) return failure(400, 'missing parameter: tid');
  if (rawStart === undefined) return failure(400, 'missing parameter: history_start');
  if (rawEnd === undefined) return failure(400, 'missing parameter: history_end');
  const start = parseNonNegativeInteger(rawStart);
  if (start === null) return failure(400, 'invalid history_start: must be a non-negative integer');
  const end = parseNonNegativeInteger(rawEnd);
  if (end === null) return failure(400, 'invalid history_end: must be a non-negative integer');
  if (end < start)
    return failure(400, 'invalid range: history_end must not be less than history_start');
  const prepared = account.byTid.get(tid);
  if (prepared === undefined || prepared.demo.number !== number)
    return failure(200, 'number not found');
  return { status: 200, body: historyBody(prepared, start, inclusiveEnd ? end + 1 : end) };
}

function handleOwnedNumbers(account: PreparedAccount, params: Map<string, string>): Outcome {
  const type = params.get('number_type');
  if (type === undefined) return failure(400, 'missing parameter: number_type');
  if (type !== 'local' && type !== 'tollfree')
    return failure(400, "invalid number_type: must be 'local' or 'tollfree'");
  return { status: 200, body: [account.owned[type]] };
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const { latencyMs = 0, observer, arrivalsEveryMs = 0 } = options;
  const inclusiveEnd = options.historyEnd === 'inclusive';
  if (!Number.isFinite(latencyMs) || latencyMs < 0)
    throw new RangeError('latencyMs must be a non-negative finite number');
  const all = [...DEMO_ACCOUNTS, ...(options.accounts ?? [])];
  let accounts: ReadonlyMap<string, PreparedAccount> = new Map(
    all.map((a) => [a.credentials.sysId, prepareAccount(a)]),
  );

  /** Aborted by close(): answers still waiting out their latency and rings in flight are dropped. */
  const closing = new AbortController();

  /** Sends `outcome` after the latency, telling the observer (if any) about it. */
  function send(
    res: ServerResponse,
    outcome: Outcome,
    operation: SimulatorOperation | null,
    params: ReadonlyMap<string, string>,
  ): void {
    const { status, body, accountSysId = null } = outcome;
    const delayMs =
      latencyMs + (observer?.answering({ operation, accountSysId, params, status }) ?? 0);
    const write = (): void => {
      observer?.written();
      if (res.destroyed || res.writableEnded) return;
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Content-Length': body.reduce((length, chunk) => length + chunk.length, 0),
        ...outcome.headers,
      });
      res.cork();
      for (const chunk of body) res.write(chunk);
      res.end(); // end() fully uncorks, flushing head and chunks together
    };
    // Re-armed until due by the high-resolution clock: libuv timers' coarser one fires early.
    const due = performance.now() + delayMs;
    void (async () => {
      for (let left = delayMs; left > 0; left = due - performance.now())
        await sleep(Math.ceil(left), undefined, { signal: closing.signal });
    })().then(write, () => undefined);
  }

  function handleOperation(operation: SimulatorOperation, params: Map<string, string>): Outcome {
    const sysId = params.get('sys_id');
    const account = sysId === undefined ? undefined : accounts.get(sysId);
    if (account === undefined || account.account.credentials.authToken !== params.get('auth_token'))
      return failure(401, 'invalid credentials');
    const outcome =
      operation === 'smshistory'
        ? handleHistory(account, params, inclusiveEnd)
        : operation === 'ownednumbers'
          ? handleOwnedNumbers(account, params)
          : { status: 200, body: [account.owned.all] };
    return { ...outcome, accountSysId: account.account.credentials.sysId };
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const rawUrl = req.url ?? '/';
    const queryIndex = rawUrl.indexOf('?');
    const operation = OPERATIONS.get(queryIndex === -1 ? rawUrl : rawUrl.slice(0, queryIndex));
    if (operation === undefined) {
      req.resume();
      return send(res, failure(404, 'not found'), null, new Map());
    }
    const params = new Map<string, string>();
    addParams(params, queryIndex === -1 ? '' : rawUrl.slice(queryIndex + 1));
    const respond = (outcome: Outcome) => send(res, outcome, operation, params);
    if (req.method !== 'POST') {
      req.resume();
      return respond(failure(405, 'method not allowed; use POST', { Allow: 'POST' }));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    // Client went away mid-request; nothing to answer.
    req.on('error', () => undefined);
    req.on('end', () => {
      if (size > MAX_BODY_BYTES)
        return respond(failure(413, 'request body too large', { Connection: 'close' }));
      if (size > 0) {
        if (!isFormContentType(req.headers['content-type']))
          return respond(failure(415, UNSUPPORTED_MEDIA_TYPE));
        addParams(params, Buffer.concat(chunks).toString('utf8'));
      }
      respond(handleOperation(operation, params));
    });
  }

  function deliver(sysId: string, tid: string, body: string): DemoMessage {
    const prepared = accounts.get(sysId);
    const number = prepared?.account.numbers.find((n) => n.tid === tid);
    if (!prepared || !number) throw new RangeError(`no number with tid ${tid} for that account`);
    const message = arrivingMessage(number, body);
    const numbers = prepared.account.numbers.map((n) =>
      n === number ? { ...n, messages: [message, ...n.messages] } : n,
    );
    // Copy on write: the prepared demo data is shared by every simulator in the process.
    accounts = new Map(accounts).set(sysId, prepareAccount({ ...prepared.account, numbers }));
    ringWebhook(number.webhook, { event: 'message.received', tid, message_id: message.message_id });
    return message;
  }

  function setWebhooks(urlOf: (tid: string) => string, only?: string): void {
    const next = new Map<string, PreparedAccount>(accounts);
    for (const [sysId, { account }] of accounts) {
      if (only !== undefined && sysId !== only) continue;
      const numbers = account.numbers.map((n) => ({ ...n, webhook: urlOf(n.tid) }));
      next.set(sysId, prepareAccount({ ...account, numbers }));
    }
    accounts = next;
  }

  /** Rings are sent only to this machine: the simulator never calls out. */
  function ringWebhook(webhook: string, event: Record<string, string>): void {
    const url = loopbackUrl(webhook);
    if (url === null || closing.signal.aborted) return;
    void fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
      signal: AbortSignal.any([closing.signal, AbortSignal.timeout(RING_TIMEOUT_MS)]),
    })
      .then((response) => response.arrayBuffer())
      // A gateway that is down or refuses the ring: the service would retry or give up; so do we.
      .catch(() => undefined);
  }

  let arrivals: NodeJS.Timeout | null = null;
  if (arrivalsEveryMs > 0) {
    const { sysId } = DEMO_ACCOUNT.credentials;
    const tid = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
    let count = 0;
    arrivals = setInterval(() => {
      count += 1;
      deliver(sysId, tid, `Demo arrival ${count}: is this thing on?`);
    }, arrivalsEveryMs).unref();
  }

  const server = createServer(onRequest);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliver,
    setWebhooks,
    close(): Promise<void> {
      closing.abort();
      if (arrivals) clearInterval(arrivals);
      closed ??= new Promise<void>((resolveClose, rejectClose) => {
        server.close((error) => (error ? rejectClose(error) : resolveClose()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

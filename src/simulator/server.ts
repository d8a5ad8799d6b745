/**
 * Built-in upstream simulator: a real HTTP server (node:http, loopback by default)
 * speaking the SMS service's history / owned numbers wire format (as the gateway reads it in
 * src/upstream/wire.ts; its quirks in docs/upstream-quirks.md), backed by the deterministic demo
 * data of ./demo-data.ts.
 *
 * Decisions the upstream document leaves open (the simulator's choices):
 * - Parameters are read from the `application/x-www-form-urlencoded` body and from the
 *   URL query string; the body wins on conflict. Within one source, the first occurrence
 *   of a repeated parameter is used. A non-empty body with another content type is 415.
 * - History range: positions are 0-based over the number's messages ordered newest first
 *   (position 0 = newest). `history_start` is inclusive; `history_end` is exclusive by
 *   default, so the response holds positions [history_start, history_end), or inclusive
 *   with `historyEnd: 'inclusive'` (positions [history_start, history_end], as a real
 *   service might: `npm run doctor` tells them apart). A range reaching past the end
 *   returns whatever exists (possibly an empty `messages`). `message_count_requested ` is
 *   the number of positions the range names; `history_end < history_start` is a 400.
 * - For a number without messages, `most_recent_msg_id` is 0 and `most_recent_date`
 *   equals `created_date`.
 * - Status codes: unknown path 404, known path with a method other than POST 405,
 *   bad credentials 401 (checked before the other parameters), invalid parameters 400,
 *   body over 64 KiB 413. A tid the account does not own, or a `number` that does not
 *   match the tid, is HTTP 200 with `{"success":"0","error":"number not found"}`.
 * - Error messages never echo parameter values (so never the credentials either).
 * - `latencyMs` delays every response, errors included, measured from when the request
 *   body has been read.
 * Tests and benches record its calls and add accounts through `observer` and `accounts`
 * (support/recording-upstream.ts); the demo uses neither.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

import { DEMO_ACCOUNT, DEMO_ACCOUNTS, formatUpstreamTimestamp } from './demo-data.js';
import type { DemoAccount, DemoMessage, DemoNumber, DemoNumberType } from './demo-data.js';

export type SimulatorOperation = 'smshistory' | 'ownednumbers' | 'allownednumbers';

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
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Default 0; artificial delay before each response. */
  latencyMs?: number;
  /** Accounts answered beside the demo ones; those sharing one `numbers` array share its JSON. */
  accounts?: Iterable<DemoAccount>;
  observer?: SimulatorObserver;
  /**
   * Default 0 (never); every this many ms an inbound message arrives on the first demo
   * account's first number, so live updates have something to show in demo mode.
   */
  arrivalsEveryMs?: number;
  /**
   * How `history_end` is read: `exclusive` (the default; positions [start, end)) or
   * `inclusive` (positions [start, end]), so both kinds of service can be tested.
   */
  historyEnd?: 'exclusive' | 'inclusive';
}

export interface RunningSimulator {
  /** base_url, e.g. 'http://127.0.0.1:43121' (no trailing slash). */
  url: string;
  /** An inbound message arrives at the head of `tid`'s history (of the account `sysId`). */
  deliver(sysId: string, tid: string, body: string): DemoMessage;
  /** Closes the server and all keep-alive sockets. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Precomputed responses

interface PreparedNumber {
  readonly demo: DemoNumber;
  /** UTF-8 JSON of all messages (newest first), joined by ','. */
  readonly messagesJson: Buffer;
  /**
   * Byte offset where message i starts in messagesJson; the extra last entry is
   * messagesJson.length + 1, so message i spans [offsets[i], offsets[i + 1] - 1).
   */
  readonly offsets: readonly number[];
  /** `,"total_message_count":...,...,"messages":[` (everything after the requested count). */
  readonly middle: string;
}

interface PreparedAccount {
  readonly account: DemoAccount;
  readonly byTid: ReadonlyMap<string, PreparedNumber>;
  readonly ownedLocal: Buffer;
  readonly ownedTollfree: Buffer;
  readonly ownedAll: Buffer;
}

function ownedNumbersBody(numbers: readonly DemoNumber[]): Buffer {
  return Buffer.from(
    JSON.stringify({
      success: '1',
      data: numbers.map((n) => ({
        number: n.number,
        tid: n.tid,
        type: n.type,
        webhook: n.webhook,
      })),
    }),
  );
}

function integerJson(value: number, loose: boolean): string {
  return loose ? `"${value}"` : String(value);
}

function prepareNumber(n: DemoNumber): PreparedNumber {
  const newest = n.messages[0];
  const mostRecentId = newest === undefined ? 0 : Number(newest.system_id);
  const mostRecentDate = newest === undefined ? n.createdDate : newest.GMTdate;
  const middle =
    `,"total_message_count":${integerJson(n.messages.length, n.looselyTyped)}` +
    `,"created_date":${JSON.stringify(n.createdDate)}` +
    `,"most_recent_msg_id":${integerJson(mostRecentId, n.looselyTyped)}` +
    `,"most_recent_date":${JSON.stringify(mostRecentDate)}` +
    `,"tid":${JSON.stringify(n.tid)}` +
    `,"number":${JSON.stringify(n.number)}` +
    `,"optin":${JSON.stringify(n.optin)}` +
    `,"messages":[`;
  // Key order follows DemoMessage construction, i.e. the order of section 2.2.
  const parts = n.messages.map((m) => JSON.stringify(m));
  const offsets: number[] = [];
  let offset = 0;
  for (const part of parts) {
    offsets.push(offset);
    offset += Buffer.byteLength(part) + 1;
  }
  offsets.push(offset);
  return { demo: n, messagesJson: Buffer.from(parts.join(',')), offsets, middle };
}

/** Prepared JSON by numbers array: accounts owning the same array share it. */
const preparedNumbers = new WeakMap<readonly DemoNumber[], Omit<PreparedAccount, 'account'>>();

function prepareAccount(account: DemoAccount): PreparedAccount {
  const { numbers } = account;
  let prepared = preparedNumbers.get(numbers);
  if (prepared === undefined) {
    prepared = {
      byTid: new Map(numbers.map((n) => [n.tid, prepareNumber(n)])),
      ownedLocal: ownedNumbersBody(numbers.filter((n) => n.type === 'local')),
      ownedTollfree: ownedNumbersBody(numbers.filter((n) => n.type === 'tollfree')),
      ownedAll: ownedNumbersBody(numbers),
    };
    preparedNumbers.set(numbers, prepared);
  }
  return { account, ...prepared };
}

const PREPARED_BY_SYS_ID: ReadonlyMap<string, PreparedAccount> = new Map(
  DEMO_ACCOUNTS.map((a) => [a.credentials.sysId, prepareAccount(a)]),
);

/** `prepared` with `message` at its head, as when a message arrives. */
function withArrival(
  prepared: PreparedAccount,
  tid: string,
  message: DemoMessage,
): PreparedAccount {
  const numbers = prepared.account.numbers.map((n) =>
    n.tid === tid ? { ...n, messages: [message, ...n.messages] } : n,
  );
  const changed = numbers.find((n) => n.tid === tid);
  if (!changed) throw new RangeError(`no number with tid ${tid}`);
  const byTid = new Map(prepared.byTid);
  byTid.set(tid, prepareNumber(changed));
  return { ...prepared, account: { ...prepared.account, numbers }, byTid };
}

/**
 * A new inbound message for `number`, at the head of its history, dated when it arrives (so
 * arrivals every 5 s are 5 s apart). The seeded demo history ends when the simulator starts, so an
 * arrival is the newest by date as well as by position and system id.
 */
function arrivingMessage(number: DemoNumber, body: string): DemoMessage {
  const newest = number.messages[0];
  const systemId = newest === undefined ? 1 : Number(newest.system_id) + 1;
  const epochSeconds = Math.floor(Date.now() / 1000);
  return {
    system_id: number.looselyTyped ? String(systemId) : systemId,
    message_id: randomBytes(16).toString('hex'),
    GMTdate: formatUpstreamTimestamp(epochSeconds),
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

/**
 * History response as chunks: a small per-request head, a zero-copy view of the
 * precomputed message JSON for positions [start, end), and the closing ']}'. `end` is
 * exclusive here; the caller turns an inclusive `history_end` into it.
 */
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

function errorBody(message: string): Buffer {
  return Buffer.from(JSON.stringify({ success: '0', error: message }));
}

const NOT_FOUND_BODY = errorBody('not found');
const METHOD_NOT_ALLOWED_BODY = errorBody('method not allowed; use POST');
const INVALID_CREDENTIALS_BODY = errorBody('invalid credentials');
const NUMBER_NOT_FOUND_BODY = errorBody('number not found');
const UNSUPPORTED_MEDIA_TYPE_BODY = errorBody(
  'unsupported content type; send parameters as application/x-www-form-urlencoded',
);
const PAYLOAD_TOO_LARGE_BODY = errorBody('request body too large');

const MAX_BODY_BYTES = 64 * 1024;

const OPERATIONS: ReadonlyMap<string, SimulatorOperation> = new Map([
  ['/api/smshistory', 'smshistory'],
  ['/api/ownednumbers', 'ownednumbers'],
  ['/api/allownednumbers', 'allownednumbers'],
]);

// ---------------------------------------------------------------------------
// Request handling

interface Outcome {
  status: number;
  /** Sent as-is; an array is sent as consecutive chunks of one body. */
  body: Buffer | readonly Buffer[];
  headers?: Record<string, string>;
}

/** First occurrence of each key wins within one source. */
function addParams(into: Map<string, string>, source: URLSearchParams, seen: Set<string>): void {
  for (const [key, value] of source) {
    if (seen.has(key)) continue;
    seen.add(key);
    into.set(key, value);
  }
}

function isFormContentType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const mediaType = header.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return mediaType === '' || mediaType === 'application/x-www-form-urlencoded';
}

function parseNonNegativeInteger(value: string | undefined): number | null {
  if (value === undefined || !/^[0-9]+$/.test(value)) return null;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : null;
}

function badRequest(message: string): Outcome {
  return { status: 400, body: errorBody(message) };
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
  if (number === undefined || number === '') return badRequest('missing parameter: number');
  if (tid === undefined || tid === '') return badRequest('missing parameter: tid');
  if (rawStart === undefined) return badRequest('missing parameter: history_start');
  if (rawEnd === undefined) return badRequest('missing parameter: history_end');
  const start = parseNonNegativeInteger(rawStart);
  if (start === null) return badRequest('invalid history_start: must be a non-negative integer');
  const end = parseNonNegativeInteger(rawEnd);
  if (end === null) return badRequest('invalid history_end: must be a non-negative integer');
  if (end < start) {
    return badRequest('invalid range: history_end must not be less than history_start');
  }
  const prepared = account.byTid.get(tid);
  if (prepared === undefined || prepared.demo.number !== number) {
    return { status: 200, body: NUMBER_NOT_FOUND_BODY };
  }
  return { status: 200, body: historyBody(prepared, start, inclusiveEnd ? end + 1 : end) };
}

function handleOwnedNumbers(account: PreparedAccount, params: Map<string, string>): Outcome {
  const numberType = params.get('number_type');
  if (numberType === undefined) return badRequest('missing parameter: number_type');
  const type: DemoNumberType | null =
    numberType === 'local' || numberType === 'tollfree' ? numberType : null;
  if (type === null) return badRequest("invalid number_type: must be 'local' or 'tollfree'");
  return { status: 200, body: type === 'local' ? account.ownedLocal : account.ownedTollfree };
}

export function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  const latencyMs = options.latencyMs ?? 0;
  const { observer } = options;
  const inclusiveEnd = options.historyEnd === 'inclusive';
  if (!Number.isFinite(latencyMs) || latencyMs < 0) {
    return Promise.reject(new RangeError('latencyMs must be a non-negative finite number'));
  }
  let accounts: ReadonlyMap<string, PreparedAccount> = PREPARED_BY_SYS_ID;
  if (options.accounts) {
    const all = new Map(PREPARED_BY_SYS_ID);
    for (const a of options.accounts) all.set(a.credentials.sysId, prepareAccount(a));
    accounts = all;
  }

  const pendingTimers = new Set<NodeJS.Timeout>();
  let closing = false;

  /** Sends `outcome` after the latency, telling the observer (if any) about it. */
  function send(
    res: ServerResponse,
    outcome: Outcome,
    operation: SimulatorOperation | null = null,
    params: ReadonlyMap<string, string> = new Map(),
    accountSysId: string | null = null,
  ): void {
    const { status } = outcome;
    const delayMs =
      latencyMs + (observer?.answering({ operation, accountSysId, params, status }) ?? 0);
    const write = (): void => {
      observer?.written();
      if (res.destroyed || res.writableEnded) return;
      const { body } = outcome;
      const chunks: readonly Buffer[] = Buffer.isBuffer(body) ? [body] : body;
      let length = 0;
      for (const chunk of chunks) length += chunk.length;
      res.writeHead(outcome.status, {
        'Content-Type': 'application/json',
        'Content-Length': length,
        ...outcome.headers,
      });
      res.cork();
      for (const chunk of chunks) res.write(chunk);
      res.end(); // end() fully uncorks, flushing head and chunks together
    };
    if (delayMs <= 0) {
      write();
      return;
    }
    // Re-arm until the full delay has elapsed by the high-resolution clock, so the
    // delay is never shorter than latencyMs (libuv timers work on a coarser clock).
    const due = performance.now() + delayMs;
    const fire = (): void => {
      const remaining = due - performance.now();
      if (remaining > 0 && !closing) {
        const timer = setTimeout(() => {
          pendingTimers.delete(timer);
          fire();
        }, Math.ceil(remaining));
        pendingTimers.add(timer);
        return;
      }
      write();
    };
    fire();
  }

  function handleOperation(
    operation: SimulatorOperation,
    params: Map<string, string>,
  ): { outcome: Outcome; accountSysId: string | null } {
    const sysId = params.get('sys_id');
    const authToken = params.get('auth_token');
    const account = sysId === undefined ? undefined : accounts.get(sysId);
    if (
      account === undefined ||
      authToken === undefined ||
      account.account.credentials.authToken !== authToken
    ) {
      return { outcome: { status: 401, body: INVALID_CREDENTIALS_BODY }, accountSysId: null };
    }
    const accountSysId = account.account.credentials.sysId;
    switch (operation) {
      case 'smshistory':
        return { outcome: handleHistory(account, params, inclusiveEnd), accountSysId };
      case 'ownednumbers':
        return { outcome: handleOwnedNumbers(account, params), accountSysId };
      case 'allownednumbers':
        return { outcome: { status: 200, body: account.ownedAll }, accountSysId };
    }
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const rawUrl = req.url ?? '/';
    const queryIndex = rawUrl.indexOf('?');
    const path = queryIndex === -1 ? rawUrl : rawUrl.slice(0, queryIndex);
    const query = queryIndex === -1 ? '' : rawUrl.slice(queryIndex + 1);
    const operation = OPERATIONS.get(path);

    if (operation === undefined) {
      req.resume();
      send(res, { status: 404, body: NOT_FOUND_BODY });
      return;
    }

    const queryParams = new Map<string, string>();
    addParams(queryParams, new URLSearchParams(query), new Set());

    if (req.method !== 'POST') {
      req.resume();
      const outcome = { status: 405, body: METHOD_NOT_ALLOWED_BODY, headers: { Allow: 'POST' } };
      send(res, outcome, operation, queryParams);
      return;
    }

    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => {
      // Client went away mid-request; nothing to answer.
    });
    req.on('end', () => {
      if (tooLarge) {
        const headers = { Connection: 'close' };
        send(res, { status: 413, body: PAYLOAD_TOO_LARGE_BODY, headers }, operation, queryParams);
        return;
      }
      const params = queryParams;
      if (size > 0) {
        if (!isFormContentType(req.headers['content-type'])) {
          send(res, { status: 415, body: UNSUPPORTED_MEDIA_TYPE_BODY }, operation, params);
          return;
        }
        const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        // Body parameters override query parameters.
        addParams(params, new URLSearchParams(body.toString('utf8')), new Set());
      }
      const { outcome, accountSysId } = handleOperation(operation, params);
      send(res, outcome, operation, params, accountSysId);
    });
  }

  function deliver(sysId: string, tid: string, body: string): DemoMessage {
    const prepared = accounts.get(sysId);
    const number = prepared?.account.numbers.find((n) => n.tid === tid);
    if (!prepared || !number) throw new RangeError(`no number with tid ${tid} for that account`);
    const message = arrivingMessage(number, body);
    // Copy on write: the prepared demo data is shared by every simulator in the process.
    const next = new Map(accounts);
    next.set(sysId, withArrival(prepared, tid, message));
    accounts = next;
    return message;
  }

  const arrivalsEveryMs = options.arrivalsEveryMs ?? 0;
  let arrivals: NodeJS.Timeout | null = null;
  if (arrivalsEveryMs > 0) {
    const { sysId } = DEMO_ACCOUNT.credentials;
    const tid = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
    let count = 0;
    arrivals = setInterval(() => {
      count += 1;
      deliver(sysId, tid, `Demo arrival ${count}: is this thing on?`);
    }, arrivalsEveryMs);
    arrivals.unref();
  }

  const server = createServer(onRequest);

  return new Promise<RunningSimulator>((resolve, reject) => {
    const onListenError = (error: Error): void => reject(error);
    server.once('error', onListenError);
    server.listen(port, host, () => {
      server.off('error', onListenError);
      const address = server.address() as AddressInfo;
      const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      let closed: Promise<void> | null = null;
      resolve({
        url: `http://${urlHost}:${address.port}`,
        deliver,
        close(): Promise<void> {
          if (closed !== null) return closed;
          closing = true;
          if (arrivals) clearInterval(arrivals);
          for (const timer of pendingTimers) clearTimeout(timer);
          pendingTimers.clear();
          closed = new Promise<void>((resolveClose, rejectClose) => {
            server.close((error) => (error ? rejectClose(error) : resolveClose()));
            server.closeAllConnections();
          });
          return closed;
        },
      });
    });
  });
}

/**
 * The doctor's only way to the service: one form-encoded POST at a time, within a budget and a
 * rate. It keeps of each answer what the findings need, never the parameters it sent, so no
 * credential is held beyond the call.
 */
import { request } from 'undici';
import type { UpstreamOperation } from '../core/signals.js';
import { parseRetryAfter } from '../upstream/client.js';

export interface CallerOptions {
  readonly baseUrl: URL;
  /** Calls in all; a probe asking for more is told the budget is spent. */
  readonly maxCalls: number;
  /** Calls a second at most (calls start at least 1/rate apart). */
  readonly ratePerSecond: number;
  /** One call's deadline, headers and body included. @default 15000 */
  readonly timeoutMs?: number;
  /** Applied to every body before it is kept, so no trace of a credential the service echoes. */
  readonly redact?: (text: string) => string;
}

/** What one call saw. `json` is undefined when the body was not JSON. */
export interface Answer {
  readonly operation: UpstreamOperation;
  /** What the call was for, as shown in evidence ("history 0..1", "wrong credentials"). */
  readonly label: string;
  /** null when no answer came (connection refused, timeout): then `failure` says why. */
  readonly status: number | null;
  readonly failure: string | null;
  readonly contentType: string | null;
  /** Retry-After and rate-limit looking headers, as sent. */
  readonly limitHeaders: Readonly<Record<string, string>>;
  readonly ms: number;
  readonly json: unknown;
  readonly bytes: number;
}

export class BudgetSpent extends Error {
  override readonly name = 'BudgetSpent';
}

/** After a 429, the longest the doctor waits before its one retry. */
const MAX_RETRY_WAIT_MS = 10_000;
/** Retry-After and the X-RateLimit-* / RateLimit-* families. */
const LIMIT_HEADER = /^(retry-after|(x-)?rate-?limit.*)$/i;

/** What a call that got no answer saw, besides why and how long it took. */
const NO_ANSWER = { status: null, contentType: null, limitHeaders: {}, json: undefined, bytes: 0 };

/** A call: the operation, what it is for (its label in evidence), its parameters. */
type Call = [operation: UpstreamOperation, label: string, params: Readonly<Record<string, string>>];

export type Caller = ReturnType<typeof createCaller>;

/**
 * `credentials` are added to every call's form body; `params` may hold a `sys_id` and
 * `auth_token` of their own (the invented pair of the wrong-credentials probe), which win.
 */
export function createCaller(
  options: CallerOptions,
  credentials: { readonly sysId: string; readonly authToken: string },
) {
  const { baseUrl, maxCalls, timeoutMs = 15_000 } = options;
  const prefix = baseUrl.pathname.replace(/\/+$/, '');
  const answers: Answer[] = [];
  let made = 0;
  let nextAt = 0;
  // One call at a time: the rate is the rate, whatever the probes do.
  let queue: Promise<unknown> = Promise.resolve();

  async function once(...[operation, label, params]: Call): Promise<Answer> {
    if (made >= maxCalls) throw new BudgetSpent(`the budget of ${maxCalls} calls is spent`);
    const wait = nextAt - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    made += 1;
    nextAt = performance.now() + 1000 / options.ratePerSecond;
    const body = new URLSearchParams({
      sys_id: credentials.sysId,
      auth_token: credentials.authToken,
      ...params,
    });
    const started = performance.now();
    let seen: Omit<Answer, 'operation' | 'label'>;
    try {
      const response = await request(new URL(`${prefix}/api/${operation}`, baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: body.toString(),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = (options.redact ?? ((t: string) => t))(await response.body.text());
      const limitHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (LIMIT_HEADER.test(name) && value !== undefined)
          limitHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      const contentType = response.headers['content-type'];
      seen = {
        status: response.statusCode,
        failure: null,
        contentType: (Array.isArray(contentType) ? contentType[0] : contentType) ?? null,
        limitHeaders,
        ms: performance.now() - started,
        json: parseJson(text),
        bytes: Buffer.byteLength(text),
      };
    } catch (error) {
      const failure = describeFailure(error, timeoutMs);
      seen = { ...NO_ANSWER, failure, ms: performance.now() - started };
    }
    const answer: Answer = { operation, label, ...seen };
    answers.push(answer);
    return answer;
  }

  /** A 429 is waited out (Retry-After, capped) and tried once more, budget permitting. */
  async function withOneRetry(...call: Call): Promise<Answer> {
    const first = await once(...call);
    if (first.status !== 429 || made >= maxCalls) return first;
    const retryAfter = parseRetryAfter(first.limitHeaders['retry-after'], Date.now()) ?? 1_000;
    if (retryAfter > MAX_RETRY_WAIT_MS) return first;
    nextAt = Math.max(nextAt, performance.now() + retryAfter);
    const [operation, label, params] = call;
    return once(operation, `${label} (retried after 429)`, params);
  }

  return {
    call(...call: Call): Promise<Answer> {
      const result = queue.then(() => withOneRetry(...call));
      queue = result.catch(() => undefined);
      return result;
    },
    /** Calls made so far (retries included). */
    get made(): number {
      return made;
    },
    maxCalls,
    /** Every answer so far, in order (a retried 429 and its retry both). */
    answers: answers as readonly Answer[],
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Why no answer came, by error code (never the error's message, which may carry a URL). */
function describeFailure(error: unknown, timeoutMs: number): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  if (name === 'TimeoutError' || (typeof code === 'string' && code.endsWith('_TIMEOUT')))
    return `no answer within ${timeoutMs} ms`;
  if (typeof code === 'string') return `no answer (${code})`;
  return 'no answer (the connection failed)';
}

/**
 * Recovery after an outage, as a model (fast-check commands): three accounts' calls through the
 * whole traffic layer (src/traffic/traffic.ts: the gate, each account's breaker and 429 window,
 * the service's breaker, slots, deadlines and retries) on a fake clock, answered in any order
 * with any outcome: success, a 503, a refused connection, a 429, no answer (the attempt times
 * out), the service going down and coming back. Whatever happened, once the service is healthy
 * for good every account is served again within the breakers' reset time (or the end of a 429
 * window it was given, if later) plus one probe: no probe slot is ever lost.
 *
 * The service is in memory, not on loopback, so that the clock can be fake and each run takes
 * milliseconds; test/e2e/outage-recovery.test.ts is the same story over real sockets.
 */
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Credentials } from '../../src/core/credentials.js';
import type { OwnedNumber } from '../../src/core/domain.js';
import { ErrorCode, UpstreamError } from '../../src/core/errors.js';
import type { CallOptions, UpstreamClient } from '../../src/core/upstream-client.js';
import { processLoop } from '../../src/traffic/loop-monitor.js';
import { withTrafficControl, type ManagedUpstreamClient } from '../../src/traffic/traffic.js';
import { CredentialMemory } from '../../src/traffic/verification.js';

const ACCOUNTS = 3;
const COOLDOWN_MS = 1_000;
/** How long the healthy service takes to answer: a probe's round trip. */
const LATENCY_MS = 20;
/** After the recovery, each account asks this often (a client retrying). */
const POLL_MS = 100;

type Reply =
  | { readonly kind: 'ok' }
  | { readonly kind: '503' }
  | { readonly kind: 'refused' }
  | { readonly kind: '429'; readonly retryAfterMs: number }
  /** Not an UpstreamError: something in this process broke; it says nothing of the service. */
  | { readonly kind: 'broken' };

/** What the real client would throw for each reply (src/upstream/client.ts). */
function failure(reply: Exclude<Reply, { kind: 'ok' }>): Error {
  switch (reply.kind) {
    case 'broken':
      return new TypeError('cannot read properties of undefined');
    case '503':
      return new UpstreamError(ErrorCode.UpstreamError, 'HTTP 503', { retryable: true });
    case 'refused':
      return new UpstreamError(ErrorCode.UpstreamError, 'could not be reached', {
        retryable: true,
        connectionFault: true,
      });
    case '429':
      return new UpstreamError(ErrorCode.RateLimited, 'HTTP 429', {
        retryAfterMs: reply.retryAfterMs,
      });
  }
}

interface Call {
  readonly account: number;
  answer(reply: Reply): void;
}

/** The service: calls wait for the model to answer them, or, while it is up, answer themselves. */
class Service implements UpstreamClient {
  readonly waiting: Call[] = [];
  up = false;

  constructor(private readonly accountOf: (credentials: Credentials) => number) {}

  private call(credentials: Credentials, options?: CallOptions): Promise<OwnedNumber[]> {
    return new Promise((resolve, reject) => {
      const signal = options?.signal;
      const call: Call = {
        account: this.accountOf(credentials),
        answer: (reply) => {
          signal?.removeEventListener('abort', onAbort);
          if (reply.kind === 'ok') resolve([]);
          else reject(failure(reply));
        },
      };
      // The attempt's limit or the deadline: the caller stops waiting (as the real client does).
      const onAbort = (): void => {
        const index = this.waiting.indexOf(call);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.up) setTimeout(() => call.answer({ kind: 'ok' }), LATENCY_MS);
      else this.waiting.push(call);
    });
  }

  ownedNumbers(credentials: Credentials, _type: unknown, options?: CallOptions) {
    return this.call(credentials, options);
  }
  allOwnedNumbers(credentials: Credentials, options?: CallOptions) {
    return this.call(credentials, options);
  }
  history(): never {
    throw new Error('not used by the model');
  }
}

/** What the model knows: when each account's 429 window (the latest it was given) ends. */
interface Model {
  readonly windowEnd: number[];
}

interface Real {
  readonly service: Service;
  readonly client: ManagedUpstreamClient;
  /** When each account was first answered with data (since the recovery), and its last error. */
  readonly servedAt: (number | undefined)[];
  readonly lastError: (string | undefined)[];
}

const credentialsOf = (account: number): Credentials => ({
  sysId: `AC-${account}`,
  authToken: `token-${account}`,
});

/** Lets every promise chain the last step started run to where it waits on the clock. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function request(real: Real, account: number): void {
  real.client.ownedNumbers(credentialsOf(account), 'LOCAL').then(
    () => void (real.servedAt[account] ??= Date.now()),
    (error: unknown) => void (real.lastError[account] = (error as Error).message),
  );
}

class Send implements fc.AsyncCommand<Model, Real> {
  constructor(readonly account: number) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    request(real, this.account);
    await settle();
  }
  toString = () => `send(${this.account})`;
}

class Answer implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly reply: Reply,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const { waiting } = real.service;
    if (waiting.length === 0) return;
    const [call] = waiting.splice(this.pick % waiting.length, 1);
    if (this.reply.kind === '429') {
      const end = Date.now() + this.reply.retryAfterMs;
      model.windowEnd[call!.account] = Math.max(model.windowEnd[call!.account]!, end);
    }
    call!.answer(this.reply);
    await settle();
  }
  toString = () => `answer(#${this.pick}, ${JSON.stringify(this.reply)})`;
}

/** Time passes: attempts time out, deadlines pass, backoffs end and retry, breakers cool down. */
class Wait implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_model: Model, _real: Real) {
    await vi.advanceTimersByTimeAsync(this.ms);
    await settle();
  }
  toString = () => `wait(${this.ms})`;
}

/** The service goes down (calls wait to be answered) or comes back (they answer themselves). */
class Health implements fc.AsyncCommand<Model, Real> {
  constructor(readonly up: boolean) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    real.service.up = this.up;
    await settle();
  }
  toString = () => (this.up ? 'service up' : 'service down');
}

const replies: fc.Arbitrary<Reply> = fc.oneof(
  fc.constant({ kind: 'ok' } as const),
  fc.constant({ kind: '503' } as const),
  fc.constant({ kind: 'refused' } as const),
  fc
    .constantFrom(0, 500, 1_000, 2_500)
    .map((retryAfterMs) => ({ kind: '429', retryAfterMs }) as const),
  fc.constant({ kind: 'broken' } as const),
);

const account = fc.integer({ min: 0, max: ACCOUNTS - 1 });
const commands = fc.commands(
  [
    account.map((a) => new Send(a)),
    account.map((a) => new Send(a)),
    fc.tuple(fc.nat(), replies).map(([pick, reply]) => new Answer(pick, reply)),
    fc.tuple(fc.nat(), replies).map(([pick, reply]) => new Answer(pick, reply)),
    fc.integer({ min: 1, max: 1_500 }).map((ms) => new Wait(ms)),
    fc.boolean().map((up) => new Health(up)),
  ],
  { maxCommands: 50 },
);

const settings = fc.record({
  // Low thresholds: breakers open often within a short run (how they open is not the question).
  breakerThreshold: fc.integer({ min: 1, max: 3 }),
  retries: fc.integer({ min: 0, max: 2 }),
});

/**
 * Runs `steps` on a fresh traffic layer, then ends the outage for good and checks each account is
 * served in time.
 */
async function outage(
  chosen: { breakerThreshold: number; retries: number },
  steps: Iterable<fc.AsyncCommand<Model, Real>>,
): Promise<void> {
  const memory = new CredentialMemory();
  const service = new Service((c) => Number(c.sysId.slice('AC-'.length)));
  const client = withTrafficControl(service, {
    timeoutMs: 2_000,
    attemptTimeoutMs: 500,
    retries: chosen.retries,
    retryBaseDelayMs: 50,
    breakerThreshold: chosen.breakerThreshold,
    breakerCooldownMs: COOLDOWN_MS,
    defaultRetryAfterMs: 1_000,
    // Two calls in flight at most: calls also wait for a slot, and some give up waiting.
    connections: 2,
    maxInFlight: 2,
    accountShare: 0.5,
    accountSharePercent: 50,
    verifiedTtlMs: 300_000,
    refusedTtlMs: 60_000,
    historyEnd: 'exclusive',
    credentials: memory,
  });
  const none = () => Array.from({ length: ACCOUNTS }, () => undefined);
  const real: Real = { service, client, servedAt: none(), lastError: none() };
  const model: Model = { windowEnd: Array.from({ length: ACCOUNTS }, () => 0) };
  await fc.asyncModelRun(() => ({ model, real }), steps);

  // The outage ends: the calls caught in it fail as it ends, and the service stays up.
  const recoveredAt = Date.now();
  for (const call of service.waiting.splice(0)) call.answer({ kind: 'refused' });
  service.up = true;
  real.servedAt.fill(undefined, 0, ACCOUNTS);
  await settle();
  // The reset (or the window's end), then one probe: the account's next request may find the
  // service breaker's one probe out, answered within LATENCY_MS, and go with the one after it.
  const dueAt = model.windowEnd.map(
    (end) => Math.max(recoveredAt + COOLDOWN_MS, end) + POLL_MS + LATENCY_MS + POLL_MS,
  );
  const latest = Math.max(...dueAt);
  while (Date.now() <= latest && real.servedAt.includes(undefined)) {
    for (let a = 0; a < ACCOUNTS; a += 1) request(real, a);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    await settle();
  }
  for (let a = 0; a < ACCOUNTS; a += 1) {
    const servedAfter = (real.servedAt[a] ?? Number.POSITIVE_INFINITY) - recoveredAt;
    expect(
      servedAfter,
      `account ${a}, due ${dueAt[a]! - recoveredAt} ms after the recovery; last error: ${real.lastError[a]}`,
    ).toBeLessThanOrEqual(dueAt[a]! - recoveredAt);
  }
}

/** The clocks traffic control reads; not setInterval: the load monitor keeps real time. */
const fakeClock = () =>
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'performance'] });

// The process's load monitor (its timer) is started before any clock is faked.
beforeAll(() => void processLoop());
afterEach(() => void vi.useRealTimers());

describe('after an outage, without a restart', () => {
  it('serves every account again within the reset time (or its 429 window) plus one probe', async () => {
    await fc.assert(
      fc.asyncProperty(settings, commands, async (chosen, steps) => {
        fakeClock();
        try {
          await outage(chosen, steps);
        } finally {
          vi.useRealTimers();
        }
      }),
      { numRuns: 100 },
    );
  });

  // Interleavings the property found before the fix, kept as they shrank, and one more.
  it.each([
    [
      "an account's breaker half-open while the service's is still open",
      [new Send(0), new Wait(800), new Send(1), new Answer(0, { kind: 'refused' })],
    ],
    [
      "an account's breaker half-open while its pair's 429 window is open",
      [new Send(1), new Send(1), new Answer(0, { kind: '429', retryAfterMs: 2_500 })],
    ],
    // What traffic.ts's `finally` is for: the call told nothing, so nothing else frees its slot.
    [
      "the service breaker's probe breaking in this process, with no answer either way",
      [
        new Send(1),
        new Answer(0, { kind: 'refused' }),
        new Wait(1_000),
        new Send(0),
        new Answer(0, { kind: 'broken' }),
      ],
    ],
  ])('%s: the probe slot comes back', async (_name, steps) => {
    fakeClock();
    await outage({ breakerThreshold: 1, retries: 0 }, steps);
  });
});

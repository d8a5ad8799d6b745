/**
 * How many calls this copy may have in flight to the service, adapted to what the service
 * tolerates: in the spirit of Netflix concurrency-limits' Gradient2 and Envoy's adaptive
 * concurrency filter. Written by hand: no maintained Node package offers one, and the rule is
 * short.
 *
 * The one signal it acts on: **the service slowing as this copy's own concurrency grows**.
 * A service's normal latency is not that signal. Each operation has its own (a history call takes
 * longer than a number list), and it drifts over the day; so every operation keeps its own
 * baseline, the fastest answer seen, with the calls in flight when it was seen. Every `window`
 * finished calls, the window's fastest call relative to its operation's baseline is compared
 * with the tolerance:
 *   allowed = tolerance * baseline + slack
 *   within it, latency flat (<= baseline + slack), window used: limit = limit * 2
 *   within it, window used:                                      limit = limit + sqrt(limit)
 *   above it otherwise (more in flight than the operation's last window, or a back-off that
 *     is helping): this copy's own load:   limit = limit * max(allowed / recent, 0.5) + sqrt(limit)
 *   above it, for UNHELPED_WINDOWS windows in a row each sending fewer calls than the last and
 *     none faster: the service's normal latency changed, not its load: the baseline moves there
 * So the limit starts open (one account's fan-out is not throttled to learn), a slower operation
 * is judged against its own normal latency, a busier hour moves the baseline after a brief
 * back-off that did not help (the limit is open again within a second at 20 ms calls), and a
 * service that slows as calls pile up is approached, not overshot. A limit that
 * shrank doubles back per window once latency is flat again: within a second at 20 ms calls. A
 * timeout that is evidence about the whole service halves it at once. The limit only grows when
 * the window used it (half of it in flight, or calls waiting for a slot).
 *
 * The gateway's own delay is not the service slowing. The round trip is timed in this process,
 * so it includes the time the answer waited for this process's event loop (its CPU the
 * bottleneck, a GC pause): each call's time is discounted by the last stall of the loop that
 * ended while it was out (`ownDelayMs`, loop-monitor.ts), and a window is judged by its fastest
 * call, not its mean: an answer landing just as the loop polls waits for nothing, while a service
 * that really slows with load slows every call, the fastest included (bench scenario f).
 *
 * `slack` is an absolute allowance: a service answering in a millisecond "doubles" its latency
 * from a few ms of scheduling alone, and throttling it then only leaves the gateway idle.
 */
export interface AdaptiveLimitOptions {
  /** Where the limit starts. @default max */
  readonly initial?: number;
  /** The limit never goes below this, however slow the service gets. */
  readonly min: number;
  /** Nor above this: the hard cap of calls in flight (the pool's connections). */
  readonly max: number;
  /** How much slower than its baseline the service may get before the limit shrinks. @default 2 */
  readonly tolerance?: number;
  /** Latency above the baseline, in ms, that never counts as the service slowing. @default 10 */
  readonly slackMs?: number;
  /** The clock, in ms (tests pass their own). @default performance.now */
  readonly now?: () => number;
  /**
   * The last stall of this process's event loop that ended after a time on `now`'s clock, in ms:
   * what a call sent then may owe to the gateway rather than the service. @default none (0)
   */
  readonly ownDelayMs?: (sinceMs: number) => number;
}

const MIN_WINDOW = 8;
/** Windows in a row in which sending less did not help before the latency counts as normal. */
const UNHELPED_WINDOWS = 3;

/** One operation's normal latency: its fastest answer, and the calls in flight then. */
interface Baseline {
  ms: number;
  inFlight: number;
  /** The operation's last window: its peak in flight and fastest (discounted) call. */
  lastInFlight: number;
  lastMs: number;
  /** Windows in a row above the allowance in which sending no more did not make it faster. */
  unhelped: number;
}

/** The window's fastest call, relative to its operation's baseline. */
interface Fastest {
  readonly operation: string;
  /** As timed, and discounted by the gateway's own delay. */
  readonly rawMs: number;
  readonly serviceMs: number;
}

export class AdaptiveLimit {
  private value: number;
  private readonly baselines = new Map<string, Baseline>();
  private fastest: Fastest | null = null;
  /** Of the window's calls, the smallest (discounted) time over its operation's allowance. */
  private fastestExcess = Number.POSITIVE_INFINITY;
  private windowQueued = false;
  private windowCount = 0;
  private windowPeakInFlight = 0;
  private readonly tolerance: number;
  private readonly slackMs: number;
  private readonly now: () => number;

  constructor(private readonly options: AdaptiveLimitOptions) {
    if (!(options.min >= 1 && options.min <= options.max)) {
      throw new RangeError('the adaptive limit needs 1 <= min <= max');
    }
    this.value = clamp(options.initial ?? options.max, options.min, options.max);
    this.tolerance = options.tolerance ?? 2;
    this.slackMs = options.slackMs ?? 10;
    this.now = options.now ?? (() => performance.now());
  }

  /** The number of calls that may be in flight now. */
  get current(): number {
    return Math.floor(this.value);
  }

  /** An operation's normal latency as last estimated, in ms (null before any answer). */
  baseline(operation = DEFAULT_OPERATION): number | null {
    return this.baselines.get(operation)?.ms ?? null;
  }

  /**
   * One call of `operation` the service answered after `rttMs`, with `inFlight` calls out (itself
   * included); `queued` when other calls were waiting for a slot as it ended.
   */
  sample(rttMs: number, inFlight: number, queued = false, operation = DEFAULT_OPERATION): void {
    const own = this.options.ownDelayMs?.(this.now() - rttMs) ?? 0;
    const serviceMs = Math.max(rttMs - own, 0);
    let baseline = this.baselines.get(operation);
    if (!baseline || rttMs < baseline.ms) {
      // Faster than ever: this is the operation's normal latency (learnt as timed, never
      // discounted, so it cannot fall to zero and make any real latency look like a rise).
      baseline = {
        ms: rttMs,
        inFlight: Math.max(inFlight, baseline?.inFlight ?? 0),
        lastInFlight: baseline?.lastInFlight ?? inFlight,
        lastMs: baseline?.lastMs ?? rttMs,
        unhelped: 0,
      };
      this.baselines.set(operation, baseline);
    }
    const excess = serviceMs - (this.tolerance * baseline.ms + this.slackMs);
    if (excess < this.fastestExcess) {
      this.fastestExcess = excess;
      this.fastest = { operation, rawMs: rttMs, serviceMs };
    }
    if (queued) this.windowQueued = true;
    this.windowCount += 1;
    if (inFlight > this.windowPeakInFlight) this.windowPeakInFlight = inFlight;
    if (this.windowCount >= Math.max(MIN_WINDOW, this.value / 4)) this.update();
  }

  /** The service timed out on the whole copy (traffic.ts; never a 429, which is one account's): halve the limit now. */
  overloaded(): void {
    this.value = clamp(this.value / 2, this.options.min, this.options.max);
    this.resetWindow();
  }

  private update(): void {
    const fastest = this.fastest;
    const baseline = fastest ? this.baselines.get(fastest.operation) : undefined;
    if (!fastest || !baseline) return this.resetWindow();
    const allowed = this.tolerance * baseline.ms + this.slackMs;
    // With an account alone, its calls fill the limit but for the reserve kept for others.
    const used = this.windowQueued || this.windowPeakInFlight >= this.value / 2;
    const peak = this.windowPeakInFlight;
    const lastInFlight = baseline.lastInFlight;
    // The load signal is a gradient: latency against this copy's own concurrency, from the
    // operation's last window to this one.
    // Sent fewer, and got no faster: the back-off did not help.
    const unhelped = peak < baseline.lastInFlight && fastest.serviceMs >= baseline.lastMs;
    const helped = fastest.serviceMs < baseline.lastMs;
    baseline.lastInFlight = peak;
    baseline.lastMs = fastest.serviceMs;
    let next = this.value;
    if (fastest.serviceMs <= allowed) {
      baseline.unhelped = 0;
      // Latency holds: open up if the window needed the room; fast while it is flat (within the
      // slack of the baseline), by sqrt(limit) once it has begun to rise.
      const flat = fastest.rawMs <= baseline.ms + this.slackMs;
      if (used) next = this.value + (flat ? this.value : Math.sqrt(this.value));
    } else if (unhelped && ++baseline.unhelped >= UNHELPED_WINDOWS) {
      // Slower, and for windows in a row sending less did not help: the service's normal latency
      // changed (a busier hour), not its load; throttling would not make it faster. The baseline
      // moves there, and the limit, no longer held down, doubles back within a few windows.
      baseline.ms = fastest.rawMs;
      baseline.inFlight = peak;
      baseline.unhelped = 0;
    } else {
      if (helped || peak > lastInFlight) baseline.unhelped = 0;
      // Slower as this copy sent more, or getting faster as it sends less: its own load.
      const shrunk = this.value * Math.max(allowed / fastest.serviceMs, 0.5);
      // An unused limit may shrink but never grows: there is no evidence the service takes more.
      next = used ? shrunk + Math.sqrt(this.value) : Math.min(shrunk, this.value);
    }
    this.value = clamp(next, this.options.min, this.options.max);
    this.resetWindow();
  }

  private resetWindow(): void {
    this.fastest = null;
    this.fastestExcess = Number.POSITIVE_INFINITY;
    this.windowQueued = false;
    this.windowCount = 0;
    this.windowPeakInFlight = 0;
  }
}

/** The operation of a sample that names none (tests, and callers with one kind of call). */
const DEFAULT_OPERATION = 'call';

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

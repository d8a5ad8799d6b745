/**
 * How many calls this copy may have in flight to the service, after Netflix concurrency-limits'
 * Gradient2 and Envoy's adaptive concurrency (docs/limits.md "Slots and the adaptive limit").
 * It acts on one signal: the service slowing as this copy's own concurrency grows. Each operation
 * keeps its own baseline (its fastest answer); every `window` finished calls, the window's fastest
 * call against its operation's allowance (TOLERANCE * baseline + slack):
 *   within it, latency flat (<= baseline + slack), window used: limit * 2
 *   within it, window used:                                      limit + sqrt(limit)
 *   above it (this copy's own load): limit * max(allowed / recent, 0.5) + sqrt(limit) if used
 *   above it for UNHELPED_WINDOWS windows, each with at most half the calls in flight of the
 *     window measured from (the busiest since, or the last that halving made faster) and no
 *     faster than it by over the slack: the service's normal latency changed, not its load: the
 *     baseline moves there
 * A timeout that is evidence about the whole service halves it at once. The round trip includes
 * this process's own stalls, so each call is discounted by the loop's last stall (`ownDelayMs`)
 * and a window is judged by its fastest call, which waits for no stall (bench scenario f).
 * `slack` is absolute: a 1 ms service "doubles" from a few ms of scheduling alone.
 */
export interface AdaptiveLimitOptions {
  /** Where the limit starts. @default max */
  readonly initial?: number;
  /** The limit never goes below this, however slow the service gets. */
  readonly min: number;
  /** Nor above this: the hard cap of calls in flight (the pool's connections). */
  readonly max: number;
  /** Latency above the baseline, in ms, that never counts as the service slowing. @default 10 */
  readonly slackMs?: number;
  /** The clock, in ms (tests pass their own). @default performance.now */
  readonly now?: () => number;
  /** The loop's last stall that ended after a time on `now`'s clock, in ms. @default 0 */
  readonly ownDelayMs?: (sinceMs: number) => number;
}

/**
 * Calls a window holds at least (or a quarter of the limit, if more): its fastest call is the
 * signal, and among fewer one slow answer would stand for the window; a quarter of the limit
 * keeps a wide limit's windows from judging a handful of its calls.
 */
const MIN_WINDOW = 8;
/**
 * How much slower than its baseline the service may get before the limit shrinks: a service's
 * latency wanders (queues, GC, a cold cache) without this copy's load having anything to do with
 * it; twice its fastest answer is taken as where a queue of this copy's own making shows.
 */
const TOLERANCE = 2;
/** Windows in a row in which sending half as many did not help: the latency is normal now. */
const UNHELPED_WINDOWS = 3;

/** One operation's normal latency: its fastest answer. */
interface Baseline {
  ms: number;
  /** Above the allowance, the back-off's reference window: its peak in flight (0 within it) and
   * fastest (discounted) call. Not the last: a settled limit's windows are level (fan-out@c1). */
  fromInFlight: number;
  fromMs: number;
  /** Windows in a row above the allowance at half that in flight or less, none faster. */
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
  private readonly slackMs: number;
  private readonly now: () => number;

  constructor(private readonly options: AdaptiveLimitOptions) {
    if (!(options.min >= 1 && options.min <= options.max)) {
      throw new RangeError('the adaptive limit needs 1 <= min <= max');
    }
    this.value = clamp(options.initial ?? options.max, options.min, options.max);
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

  /** A call answered after `rttMs` with `inFlight` out (itself too); `queued`: others waited. */
  sample(rttMs: number, inFlight: number, queued = false, operation = DEFAULT_OPERATION): void {
    const own = this.options.ownDelayMs?.(this.now() - rttMs) ?? 0;
    const serviceMs = Math.max(rttMs - own, 0);
    let baseline = this.baselines.get(operation);
    // Faster than ever: its normal latency (as timed: discounted, it could fall to zero).
    if (!baseline) {
      baseline = { ms: rttMs, fromInFlight: 0, fromMs: rttMs, unhelped: 0 };
      this.baselines.set(operation, baseline);
    } else if (rttMs < baseline.ms) Object.assign(baseline, { ms: rttMs, unhelped: 0 });
    const excess = serviceMs - (TOLERANCE * baseline.ms + this.slackMs);
    if (excess < this.fastestExcess) {
      this.fastestExcess = excess;
      this.fastest = { operation, rawMs: rttMs, serviceMs };
    }
    if (queued) this.windowQueued = true;
    this.windowCount += 1;
    if (inFlight > this.windowPeakInFlight) this.windowPeakInFlight = inFlight;
    if (this.windowCount >= Math.max(MIN_WINDOW, this.value / 4)) this.update();
  }

  /** The service timed out on the whole copy (never a 429, one account's): halve the limit now. */
  overloaded(): void {
    this.value = clamp(this.value / 2, this.options.min, this.options.max);
    this.resetWindow();
  }

  private update(): void {
    const fastest = this.fastest;
    const baseline = fastest ? this.baselines.get(fastest.operation) : undefined;
    if (!fastest || !baseline) return this.resetWindow();
    const allowed = TOLERANCE * baseline.ms + this.slackMs;
    // With an account alone, its calls fill the limit but for the reserve kept for others.
    const used = this.windowQueued || this.windowPeakInFlight >= this.value / 2;
    const peak = this.windowPeakInFlight;
    let next = this.value;
    if (fastest.serviceMs <= allowed) {
      Object.assign(baseline, { fromInFlight: 0, unhelped: 0 });
      // Latency holds: open up if the window needed the room, fast while it is flat.
      const flat = fastest.rawMs <= baseline.ms + this.slackMs;
      if (used) next = this.value + (flat ? this.value : Math.sqrt(this.value));
    } else {
      // A gradient: latency against this copy's concurrency. Half as many, no faster: no help.
      // A slowdown linear in calls in flight, still above the allowance at half, gains more than
      // the slack (baseline <= its intercept); less is noise.
      const halved = peak <= baseline.fromInFlight / 2;
      if (
        peak > baseline.fromInFlight ||
        (halved && fastest.serviceMs + this.slackMs < baseline.fromMs)
      ) {
        Object.assign(baseline, { fromInFlight: peak, fromMs: fastest.serviceMs, unhelped: 0 });
      } else if (halved) baseline.unhelped += 1;
      if (baseline.unhelped >= UNHELPED_WINDOWS) {
        // Sending less did not help for windows in a row: the normal latency moved (a busier hour).
        Object.assign(baseline, { ms: fastest.rawMs, fromInFlight: 0, unhelped: 0 });
      } else {
        // Slower as this copy sent more, or getting faster as it sends less: its own load.
        const shrunk = this.value * Math.max(allowed / fastest.serviceMs, 0.5);
        // An unused limit may shrink but never grows: there is no evidence the service takes more.
        next = used ? shrunk + Math.sqrt(this.value) : Math.min(shrunk, this.value);
      }
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

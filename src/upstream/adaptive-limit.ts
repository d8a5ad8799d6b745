/**
 * How many calls this copy may have in flight to the service, adapted to what the service
 * tolerates: in the spirit of Netflix concurrency-limits' Gradient2 and Envoy's adaptive
 * concurrency filter. Written by hand: no maintained Node package offers one, and the rule is
 * short.
 *
 * Every `window` finished calls, their latency (the window's fastest call, see below) is compared
 * with a baseline, the service's latency when lightly loaded:
 *   allowed = tolerance * baseline + slack
 *   latency flat (recent <= baseline + slack), window used: limit = limit * 2
 *   latency holds (recent <= allowed), window used:  limit = limit + sqrt(limit)
 *   slower only by the gateway's own stalls (below): limit unchanged
 *   latency rose (recent > allowed):                 limit = limit * max(allowed / recent, 0.5)
 *                                                            + sqrt(limit)
 * So while the service's latency stays flat the limit opens to the pool within a few windows
 * (32 -> 64 -> 128: the first round trips of one fan-out), and a limit that shrank is back within
 * as many once the cause is gone; when the service slows as calls pile up, the limit shrinks, at
 * most by half per window (once latency begins to rise the limit grows by its square root only,
 * so such a service is approached, not overshot). A timeout that is evidence about the whole service halves it
 * at once. The limit only grows when the window used it (half of it in flight, which is all one
 * account may hold, or calls waiting for a slot), so an idle copy does not inflate it.
 *
 * The gateway's own delay is not the service slowing. The round trip is timed in this process,
 * so it includes the time the answer waited for this process's event loop (its CPU the
 * bottleneck, a GC pause, the process descheduled): tens of ms under a load of small queries,
 * which used to read as the service slowing, shrink the limit to its floor and keep it there. Two
 * things take it out:
 * - each call's time is discounted by the last stall of this process's loop that ended while it
 *   was out (`ownDelayMs`, event-loop-lag.ts): the wait of an answer that arrived during it (the
 *   baseline itself is learnt from calls as timed, so it never falls to zero);
 * - a window is judged by its fastest call, not its mean: the loop delay varies from call to call
 *   (an answer landing just as the loop polls waits for nothing), while a service that really
 *   slows with load slows every call, the fastest included (bench scenario f).
 * perf_hooks' monitorEventLoopDelay was the other candidate: its histogram cannot say "since this
 * call was sent" without a reset, and a mean lag is not the lag of these calls.
 *
 * The baseline is measured as Envoy does: now and then (5 s after the first call, then every
 * `probeIntervalMs`) the limit drops to its floor until a window of calls has finished with no
 * more than the floor in flight; their fastest becomes the baseline, and the limit returns to
 * where it was. In between, a faster window lowers the baseline at once. So latency that grows
 * with load never becomes the baseline, and a service that got slower for good is re-measured.
 *
 * `slack` is an absolute allowance: a service answering in a millisecond "doubles" its latency
 * from a few ms of scheduling alone, and throttling it then only leaves the gateway idle.
 */
export interface AdaptiveLimitOptions {
  /** Where the limit starts. */
  readonly initial: number;
  /** The limit never goes below this, however slow the service gets. */
  readonly min: number;
  /** Nor above this: the hard cap of calls in flight (the pool's connections). */
  readonly max: number;
  /** How much slower than its baseline the service may get before the limit shrinks. @default 2 */
  readonly tolerance?: number;
  /** Latency above the baseline, in ms, that never counts as the service slowing. @default 10 */
  readonly slackMs?: number;
  /** Time between two measurements of the baseline at the floor. @default 30000 */
  readonly probeIntervalMs?: number;
  /** The clock, in ms (tests pass their own). @default performance.now */
  readonly now?: () => number;
  /**
   * The last stall of this process's event loop that ended after a time on `now`'s clock, in ms:
   * what a call sent then may owe to the gateway rather than the service. @default none (0)
   */
  readonly ownDelayMs?: (sinceMs: number) => number;
}

const MIN_WINDOW = 8;
const FIRST_PROBE_AFTER_MS = 5_000;

export class AdaptiveLimit {
  private value: number;
  private baselineMs: number | null = null;
  /** The window's fastest call, discounted by the gateway's own delay. */
  private windowMinMs = Number.POSITIVE_INFINITY;
  /** The same, as timed: what the baseline is learnt from. */
  private windowRawMinMs = Number.POSITIVE_INFINITY;
  /** Some call of the window found no free slot: the limit, not the demand, was the bound. */
  private windowQueued = false;
  private windowCount = 0;
  private windowPeakInFlight = 0;
  private readonly tolerance: number;
  private readonly slackMs: number;
  private readonly now: () => number;
  /** When the next baseline measurement starts (null until the first call). */
  private nextProbeAt: number | null = null;
  /** While measuring the baseline: the limit to return to afterwards. */
  private probingFrom: number | null = null;

  constructor(private readonly options: AdaptiveLimitOptions) {
    if (!(options.min >= 1 && options.min <= options.max)) {
      throw new RangeError('the adaptive limit needs 1 <= min <= max');
    }
    this.value = clamp(options.initial, options.min, options.max);
    this.tolerance = options.tolerance ?? 2;
    this.slackMs = options.slackMs ?? 10;
    this.now = options.now ?? (() => performance.now());
  }

  /** The number of calls that may be in flight now (the floor while the baseline is measured). */
  get current(): number {
    return this.probingFrom === null ? Math.floor(this.value) : this.options.min;
  }

  /** True while the limit sits at its floor to measure the baseline. */
  get probing(): boolean {
    return this.probingFrom !== null;
  }

  /** The service's lightly loaded latency as last estimated, in ms (null before any sample). */
  get baseline(): number | null {
    return this.baselineMs;
  }

  /**
   * One call the service answered after `rttMs`, with `inFlight` calls out (itself included);
   * `queued` when other calls were waiting for a slot as it ended.
   */
  sample(rttMs: number, inFlight: number, queued = false): void {
    const now = this.now();
    const own = this.options.ownDelayMs?.(now - rttMs) ?? 0;
    const serviceMs = Math.max(rttMs - own, 0);
    this.nextProbeAt ??= now + FIRST_PROBE_AFTER_MS;
    if (this.probingFrom !== null) {
      // Only calls made with no more than the floor in flight measure the unloaded service.
      if (inFlight > this.options.min) return;
      this.addToWindow(rttMs, serviceMs, inFlight, queued);
      if (this.windowCount >= MIN_WINDOW) this.endProbe(now);
      return;
    }
    this.addToWindow(rttMs, serviceMs, inFlight, queued);
    if (this.windowCount >= Math.max(MIN_WINDOW, this.value / 4)) this.update();
    if (now >= this.nextProbeAt) {
      this.probingFrom = this.value;
      this.resetWindow();
    }
  }

  /** The service pushed back (429) or timed out: halve the limit now. */
  overloaded(): void {
    const { min, max } = this.options;
    if (this.probingFrom !== null) {
      this.probingFrom = clamp(this.probingFrom / 2, min, max);
      return;
    }
    this.value = clamp(this.value / 2, min, max);
    this.resetWindow();
  }

  private addToWindow(rttMs: number, serviceMs: number, inFlight: number, queued: boolean): void {
    if (serviceMs < this.windowMinMs) this.windowMinMs = serviceMs;
    if (rttMs < this.windowRawMinMs) this.windowRawMinMs = rttMs;
    if (queued) this.windowQueued = true;
    this.windowCount += 1;
    if (inFlight > this.windowPeakInFlight) this.windowPeakInFlight = inFlight;
  }

  private endProbe(now: number): void {
    this.baselineMs = this.windowRawMinMs;
    this.value = this.probingFrom ?? this.value;
    this.probingFrom = null;
    this.nextProbeAt = now + (this.options.probeIntervalMs ?? 30_000);
    this.resetWindow();
  }

  private update(): void {
    // The baseline is learnt from calls as timed, never discounted: a discount is an upper bound
    // of the gateway's share, and a baseline near zero would make any real latency look like a
    // rise.
    const baseline = Math.min(this.baselineMs ?? this.windowRawMinMs, this.windowRawMinMs);
    this.baselineMs = baseline;
    const allowed = this.tolerance * baseline + this.slackMs;
    // With each account held to a share of the limit, one account alone fills exactly half of it.
    const used = this.windowQueued || this.windowPeakInFlight >= this.value / 2;
    let next: number;
    if (this.windowRawMinMs <= allowed) {
      // Latency holds even as timed: open up, if the window needed the room; fast while it is
      // flat (within the slack of the baseline), by sqrt(limit) once it has begun to rise, so a
      // service that slows with load is approached rather than overshot.
      const flat = this.windowRawMinMs <= baseline + this.slackMs;
      next = used ? this.value + (flat ? this.value : Math.sqrt(this.value)) : this.value;
    } else if (this.windowMinMs <= allowed) {
      // Slower as timed, but no slower than the gateway's own stalls explain: no evidence either
      // way, so the limit holds (growing on it would overshoot a service that slows with load
      // while the gateway is busy, bench scenario f).
      next = this.value;
    } else {
      const recent = this.windowMinMs;
      // An unused limit may shrink but never grows: there is no evidence the service takes more.
      const shrunk = this.value * Math.max(allowed / recent, 0.5);
      next = used ? shrunk + Math.sqrt(this.value) : Math.min(shrunk, this.value);
    }
    this.value = clamp(next, this.options.min, this.options.max);
    this.resetWindow();
  }

  private resetWindow(): void {
    this.windowMinMs = Number.POSITIVE_INFINITY;
    this.windowRawMinMs = Number.POSITIVE_INFINITY;
    this.windowQueued = false;
    this.windowCount = 0;
    this.windowPeakInFlight = 0;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * How many calls this copy may have in flight to the service, adapted to what the service
 * tolerates: in the spirit of Netflix concurrency-limits' Gradient2 and Envoy's adaptive
 * concurrency filter. Written by hand: no maintained Node package offers one, and the rule is
 * short.
 *
 * Every `window` finished calls, their mean service time (queueing in the gateway excluded) is
 * compared with a baseline, the service's latency when lightly loaded:
 *   gradient = clamp((tolerance * baseline + slack) / recent, 0.5, 1)
 *   limit    = limit * gradient + sqrt(limit)
 * While latency holds (recent <= tolerance * baseline + slack) the limit grows by sqrt(limit) per
 * window;
 * when the service slows as calls pile up, the gradient falls below 1 and the limit shrinks, at
 * most by half per window. A 429 or a timeout halves it at once. The limit only grows when the
 * window actually used more than half of it, so an idle copy does not inflate it.
 *
 * The baseline is measured as Envoy does: now and then (5 s after the first call, then every
 * `probeIntervalMs`) the limit drops to its floor until a window of calls has finished with no
 * more than the floor in flight; their mean latency becomes the baseline, and the limit returns
 * to where it was. In between, a faster window lowers the baseline at once. So latency that grows
 * with load never becomes the baseline, and a service that got slower for good is re-measured.
 *
 * `slack` is an absolute allowance: a service answering in a millisecond "doubles" its latency
 * from the gateway's own event-loop delay alone (the round trip is timed in this process), and
 * throttling it then only leaves the gateway idle. A few ms more is no sign of overload.
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
}

const MIN_WINDOW = 8;
const FIRST_PROBE_AFTER_MS = 5_000;

export class AdaptiveLimit {
  private value: number;
  private baselineMs: number | null = null;
  private windowSumMs = 0;
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

  /** One call the service answered (or let time out) after `rttMs`, with `inFlight` calls out. */
  sample(rttMs: number, inFlight: number): void {
    const now = this.now();
    this.nextProbeAt ??= now + FIRST_PROBE_AFTER_MS;
    if (this.probingFrom !== null) {
      // Only calls made with no more than the floor in flight measure the unloaded service.
      if (inFlight > this.options.min) return;
      this.addToWindow(rttMs, inFlight);
      if (this.windowCount >= MIN_WINDOW) this.endProbe(now);
      return;
    }
    this.addToWindow(rttMs, inFlight);
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

  private addToWindow(rttMs: number, inFlight: number): void {
    this.windowSumMs += rttMs;
    this.windowCount += 1;
    if (inFlight > this.windowPeakInFlight) this.windowPeakInFlight = inFlight;
  }

  private endProbe(now: number): void {
    this.baselineMs = this.windowSumMs / this.windowCount;
    this.value = this.probingFrom ?? this.value;
    this.probingFrom = null;
    this.nextProbeAt = now + (this.options.probeIntervalMs ?? 30_000);
    this.resetWindow();
  }

  private update(): void {
    const recent = this.windowSumMs / this.windowCount;
    const baseline = Math.min(this.baselineMs ?? recent, recent);
    this.baselineMs = baseline;
    const allowed = this.tolerance * baseline + this.slackMs;
    const gradient = clamp(allowed / Math.max(recent, 1e-3), 0.5, 1);
    const used = this.windowPeakInFlight > this.value / 2;
    const next = this.value * gradient + (used ? Math.sqrt(this.value) : 0);
    // An unused limit may shrink but never grows: there is no evidence the service takes more.
    this.value = clamp(
      used ? next : Math.min(next, this.value),
      this.options.min,
      this.options.max,
    );
    this.resetWindow();
  }

  private resetWindow(): void {
    this.windowSumMs = 0;
    this.windowCount = 0;
    this.windowPeakInFlight = 0;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

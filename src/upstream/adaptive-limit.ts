/**
 * How many calls this copy may have in flight to the service, adapted to what the service
 * tolerates: in the spirit of Netflix concurrency-limits' Gradient2 and Envoy's adaptive
 * concurrency filter. Written by hand: no maintained Node package offers one, and the rule is
 * short.
 *
 * Every `window` finished calls, their mean service time (queueing in the gateway excluded) is
 * compared with a baseline, the service's latency when lightly loaded:
 *   gradient = clamp(tolerance * baseline / recent, 0.5, 1)
 *   limit    = limit * gradient + sqrt(limit)
 * While latency holds (recent <= tolerance * baseline) the limit grows by sqrt(limit) per window;
 * when the service slows as calls pile up, the gradient falls below 1 and the limit shrinks, at
 * most by half per window. A 429 or a timeout halves it at once. The limit only grows when the
 * window actually used more than half of it, so an idle copy does not inflate it.
 *
 * The baseline follows lower latencies at once, and higher ones slowly (2% per window) and only
 * from lightly loaded windows (at most a quarter of the limit, or the floor, in flight): a service
 * that got slower for good is eventually accepted as the new normal (the limit sinks to its floor,
 * where the windows are light), while latency that grows with load never becomes the baseline.
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
}

const BASELINE_DRIFT = 0.02;
const MIN_WINDOW = 8;

export class AdaptiveLimit {
  private value: number;
  private baselineMs: number | null = null;
  private windowSumMs = 0;
  private windowCount = 0;
  private windowPeakInFlight = 0;
  private readonly tolerance: number;

  constructor(private readonly options: AdaptiveLimitOptions) {
    if (!(options.min >= 1 && options.min <= options.max)) {
      throw new RangeError('the adaptive limit needs 1 <= min <= max');
    }
    this.value = clamp(options.initial, options.min, options.max);
    this.tolerance = options.tolerance ?? 2;
  }

  /** The number of calls that may be in flight now. */
  get current(): number {
    return Math.floor(this.value);
  }

  /** The service's lightly loaded latency as last estimated, in ms (null before any sample). */
  get baseline(): number | null {
    return this.baselineMs;
  }

  /** One call the service answered (or let time out) after `rttMs`, with `inFlight` calls out. */
  sample(rttMs: number, inFlight: number): void {
    this.windowSumMs += rttMs;
    this.windowCount += 1;
    if (inFlight > this.windowPeakInFlight) this.windowPeakInFlight = inFlight;
    if (this.windowCount >= Math.max(MIN_WINDOW, this.value / 4)) this.update();
  }

  /** The service pushed back (429) or timed out: halve the limit now. */
  overloaded(): void {
    this.value = clamp(this.value / 2, this.options.min, this.options.max);
    this.resetWindow();
  }

  private update(): void {
    const recent = this.windowSumMs / this.windowCount;
    const light = this.windowPeakInFlight <= Math.max(this.options.min, this.value / 4);
    let baseline = this.baselineMs ?? recent;
    if (recent < baseline) baseline = recent;
    else if (light) baseline += (recent - baseline) * BASELINE_DRIFT;
    this.baselineMs = baseline;
    const gradient = clamp((this.tolerance * baseline) / Math.max(recent, 1e-3), 0.5, 1);
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

/**
 * How long this process's own event loop was held up, so that a round trip timed in-process can
 * be told apart from the service slowing: an answer that reaches the socket while the loop is busy
 * (the gateway's CPU the bottleneck, a GC pause, the process descheduled) waits for the loop, and
 * that wait is the gateway's, not the service's.
 *
 * A timer ticks every TICK_MS (unref'd: it never keeps the process alive); how late each tick runs
 * is a stall of the loop ending then. The last MAX_STALLS stalls are kept, so `latestSince(t)`
 * answers "the last stall that ended after t": what an answer to a call sent at t waited for this
 * process, if it arrived during that stall (the tick that records a stall runs, in the timers
 * phase, just before the I/O that waited). An earlier stall overlapped the service's own work
 * and delayed nothing; discounting it would hide a service that slows while the gateway is busy. Written by hand rather than with perf_hooks.monitorEventLoopDelay: that
 * histogram cannot answer "since when" without being reset, and every adaptive limit of a process
 * shares it. One timer serves the whole process.
 */

/** How often the loop is sampled, in ms: a stall shorter than a couple of ticks is noise anyway. */
const TICK_MS = 10;
/** Lateness below this is the timer's own jitter, not a stall. */
const MIN_STALL_MS = 2;
const MAX_STALLS = 256;

export class EventLoopLag {
  /** Stalls in the order they ended: [end, length] pairs, end on the performance.now clock. */
  private readonly ends: number[] = [];
  private readonly lengths: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private last = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Starts sampling (idempotent). */
  start(): this {
    if (this.timer) return this;
    this.last = this.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Records one tick; public so tests can drive it with their own clock. */
  tick(): void {
    const now = this.now();
    const late = now - this.last - TICK_MS;
    this.last = now;
    if (late >= MIN_STALL_MS) this.record(now, late);
  }

  /** Records a stall of `lengthMs` that ended at `endMs`. */
  record(endMs: number, lengthMs: number): void {
    this.ends.push(endMs);
    this.lengths.push(lengthMs);
    if (this.ends.length > MAX_STALLS) {
      this.ends.shift();
      this.lengths.shift();
    }
  }

  /** The length of the last stall that ended after `sinceMs` (0 when none), in ms. */
  latestSince(sinceMs: number): number {
    const last = this.ends.length - 1;
    return last >= 0 && (this.ends[last] ?? 0) > sinceMs ? (this.lengths[last] ?? 0) : 0;
  }
}

let shared: EventLoopLag | null = null;

/** The process's one sampler, started on first use. */
export function processEventLoopLag(): EventLoopLag {
  shared ??= new EventLoopLag().start();
  return shared;
}

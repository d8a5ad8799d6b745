/**
 * Whether this process's event loop is busy: the share of wall time it spent running code
 * (perf_hooks event-loop utilization, ELU) over the last window. Admission (fair-admission.ts)
 * limits the requests running while it is busy, and follows each window to keep the loop full.
 *
 * Busy starts when one window is at least BUSY_AT, and ends only after QUIET_WINDOWS windows in a
 * row under QUIET_BELOW: once seats are limited the loop may have a little room again, and
 * letting everyone in at that moment would only saturate it anew. A timer samples every WINDOW_MS,
 * unref'd so it never keeps the process alive; one sampler serves the process.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export const WINDOW_MS = 100;
export const BUSY_AT = 0.85;
export const QUIET_BELOW = 0.5;
export const QUIET_WINDOWS = 10;

export class LoopUtilization {
  private last: EventLoopUtilization | null = null;
  private timer: NodeJS.Timeout | null = null;
  private quietWindows = 0;
  private busyNow = false;
  private latest = 0;
  private readonly listeners = new Set<(busy: boolean) => void>();
  private readonly samplers = new Set<(utilization: number) => void>();

  /** Starts sampling (idempotent). */
  start(): this {
    if (this.timer) return this;
    this.last = performance.eventLoopUtilization();
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      this.sample(performance.eventLoopUtilization(now, this.last ?? undefined).utilization);
      this.last = now;
    }, WINDOW_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The last window's utilization, from 0 to 1. */
  get utilization(): number {
    return this.latest;
  }

  get busy(): boolean {
    return this.busyNow;
  }

  /** Called with the new state each time busy starts or ends. */
  onChange(listener: (busy: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called with each window's utilization, after busy is updated. */
  onSample(listener: (utilization: number) => void): () => void {
    this.samplers.add(listener);
    return () => this.samplers.delete(listener);
  }

  /** Records one window's utilization; public so tests can drive it. */
  sample(utilization: number): void {
    this.latest = utilization;
    if (utilization >= BUSY_AT) {
      this.quietWindows = 0;
      this.set(true);
    } else if (utilization < QUIET_BELOW) {
      this.quietWindows += 1;
      if (this.quietWindows >= QUIET_WINDOWS) this.set(false);
    } else {
      this.quietWindows = 0;
    }
    for (const listener of this.samplers) listener(utilization);
  }

  private set(busy: boolean): void {
    if (busy === this.busyNow) return;
    this.busyNow = busy;
    for (const listener of this.listeners) listener(busy);
  }
}

let shared: LoopUtilization | null = null;

/** The process's one sampler, started on first use. */
export function processLoopUtilization(): LoopUtilization {
  shared ??= new LoopUtilization().start();
  return shared;
}

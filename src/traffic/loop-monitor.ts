/**
 * The one load monitor, one unref'd timer: how late each tick runs (the adaptive limit's
 * `stallSince`) and each window's event-loop utilization (busy: this folder's README). Busy ends
 * only after QUIET_WINDOWS quiet ones: once seats are limited the loop has room again, and letting
 * everyone in then would saturate it anew. Not monitorEventLoopDelay: it cannot say "since when".
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export const TICK_MS = 10;
export const WINDOW_MS = 100;
export const BUSY_AT = 0.85;
export const QUIET_BELOW = 0.5;
export const QUIET_WINDOWS = 10;
/** Lateness below this is the timer's own jitter, not a stall. */
const MIN_STALL_MS = 2;

export class LoopMonitor {
  private timer: NodeJS.Timeout | null = null;
  private lastTick = 0;
  private lastWindow = 0;
  private lastElu: EventLoopUtilization | null = null;
  private stallEnd = Number.NEGATIVE_INFINITY;
  private stallLength = 0;
  private quietWindows = 0;
  private busyNow = false;
  private latest = 0;
  private readonly listeners = new Set<(busy: boolean) => void>();
  private readonly samplers = new Set<(utilization: number) => void>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Starts sampling (idempotent). */
  start(): this {
    if (this.timer) return this;
    this.lastTick = this.lastWindow = this.now();
    this.lastElu = performance.eventLoopUtilization();
    this.timer = setInterval(() => this.tick(), TICK_MS);
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
  onChange(listener: (busy: boolean) => void): void {
    this.listeners.add(listener);
  }

  /** Called with each window's utilization, after busy is updated. */
  onSample(listener: (utilization: number) => void): void {
    this.samplers.add(listener);
  }

  /** The length of the last stall if it ended after `sinceMs` (else 0), in ms. */
  stallSince(sinceMs: number): number {
    return this.stallEnd > sinceMs ? this.stallLength : 0;
  }

  /** One tick of the timer; public so tests can drive it with their own clock. */
  tick(): void {
    const now = this.now();
    const late = now - this.lastTick - TICK_MS;
    this.lastTick = now;
    if (late >= MIN_STALL_MS) {
      this.stallEnd = now;
      this.stallLength = late;
    }
    if (now - this.lastWindow < WINDOW_MS) return;
    this.lastWindow = now;
    const elu = performance.eventLoopUtilization();
    const utilization = this.lastElu
      ? performance.eventLoopUtilization(elu, this.lastElu).utilization
      : 0;
    this.lastElu = elu;
    this.sample(utilization);
  }

  /** Busy from now: admission priced a burst the windows have yet to see (fair-admission.ts). */
  surge(): void {
    this.quietWindows = 0;
    this.set(true);
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

let shared: LoopMonitor | null = null;

/** The process's one monitor, started on first use (and on the first use after a stop). */
export function processLoop(): LoopMonitor {
  return (shared ??= new LoopMonitor()).start();
}

/** Stops the process's monitor's timer: the runtime's stop (src/runtime.ts). */
export const stopProcessLoop = (): void => shared?.stop();

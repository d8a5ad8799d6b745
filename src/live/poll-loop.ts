/**
 * The poll loop of one topic (one account's number; docs/live-updates.md "Polling and sharing"):
 * while this copy holds the topic (bus.claim), read the newest page, find what is new (detect.ts)
 * and publish it, each event with its `seq` (subscription.ts). A ring of the number's doorbell
 * (doorbell.ts) polls at once; while the bell works, regular polls are only a safety net.
 */
import type { Credentials } from '../core/credentials.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from '../core/upstream-client.js';
import { sequencedEvent, type LiveBus, type LiveEvent } from './bus.js';
import { detectNew, seenFrom, type SeenState } from './detect.js';
import type { Doorbell } from './doorbell.js';
import type { LiveObserver } from './observer.js';

export interface PollLoopOptions {
  readonly client: UpstreamClient;
  readonly bus: LiveBus;
  readonly pollMs: number;
  /** Messages read per poll; more only when more than this arrived. @default 20 */
  readonly pageSize?: number;
  /** Most messages read to catch up after a burst. @default 200 */
  readonly maxCatchUp?: number;
  /** Failed polls in a row before subscribers hear of it. @default 3 */
  readonly failuresBeforeError?: number;
  readonly logger?: Logger;
  readonly observer?: LiveObserver;
  /** Rings that make the loop poll at once (absent: polls every pollMs only). */
  readonly doorbell?: Doorbell | null;
}

export interface PollTarget {
  readonly tid: string;
  readonly number: string;
  /** The number's webhook at the service: its doorbell URL means the bell is wired from the start. */
  readonly webhook?: string | null;
}

/** The `count` newest messages of the target's history. */
export function readNewest(
  client: UpstreamClient,
  credentials: Credentials,
  { tid, number }: PollTarget,
  count: number,
) {
  return client.history(credentials, { tid, number, start: 0, end: count });
}

/** The code a failed read shows subscribers. */
export function failureCode(error: unknown): string {
  return error instanceof UpstreamError ? error.code : ErrorCode.UpstreamError;
}

export class PollLoop {
  private timer: NodeJS.Timeout | undefined;
  private seen: SeenState | null = null;
  /** Whether this copy polled the topic last tick (its `seen` is then current). */
  private polling = false;
  private failures = 0;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  /** Whether a tick (claim, then maybe a poll) is under way: a ring waits for its end. */
  private ticking = false;
  /** When this copy last polled the number (performance.now()); rings keep a gap from it. */
  private lastPollAt = Number.NEGATIVE_INFINITY;
  /** The bell rang since the last poll began: the next poll is due at once (after the gap). */
  private ringPending = false;
  /**
   * The bell works: regular polls slow to the safety net. Set by a ring (or a webhook already set
   * to the doorbell URL); cleared when a poll finds a message no ring announced.
   */
  private ringing: boolean;
  private readonly unwatch: () => void;

  constructor(
    private readonly topic: string,
    private readonly target: PollTarget,
    /** Held only while the loop runs: the first subscriber's (identical for all of them). */
    private readonly credentials: Credentials,
    private readonly options: PollLoopOptions,
  ) {
    const { doorbell } = options;
    this.ringing = doorbell?.wired(target.tid, target.webhook) ?? false;
    this.unwatch = doorbell?.watch(target.tid, this) ?? (() => undefined);
  }

  start(): void {
    // At once: it learns what is there already, so only later arrivals are sent.
    this.schedule(0);
  }

  /** Stops polling; resolves once a poll under way has finished and the claim is released. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch();
    clearTimeout(this.timer);
    await this.running;
    if (this.polling) await this.options.bus.release(this.topic);
  }

  /** Whether this copy polls the topic now (holds its lock). */
  get holding(): boolean {
    return this.polling;
  }

  /**
   * The number's doorbell rang (on any copy): the copy polling it polls now, or one ring gap after
   * its last poll. The others only remember that the bell works, for a takeover.
   */
  ring(): void {
    if (this.stopped) return;
    this.ringing = true;
    this.ringPending = true;
    if (!this.polling || this.ticking) return; // a tick under way schedules the poll as it ends
    clearTimeout(this.timer);
    this.schedule(this.ringDelay());
  }

  private ringDelay(): number {
    const gap = this.options.doorbell?.ringGapMs ?? 0;
    return Math.max(0, this.lastPollAt + gap - performance.now());
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const started = Date.now();
      this.ticking = true;
      this.running = this.tick().finally(() => {
        this.ticking = false;
        // The holder keeps its cadence (renewal must beat the lock's 1.5-interval expiry); the
        // others ask four times per interval: a takeover 1.75 intervals after the last renewal.
        const every = this.polling ? this.options.pollMs : this.options.pollMs / 4;
        const regular = Math.max(0, every - (Date.now() - started));
        this.schedule(this.ringPending && this.polling ? this.ringDelay() : regular);
      });
    }, delayMs);
  }

  /**
   * Whether a regular tick of the holder polls: every tick, or while the bell works only once the
   * safety net has passed since the last poll (a tick still renews the lock). Ticks come every
   * pollMs, a little early or late: half an interval of slack.
   */
  private regularPollDue(): boolean {
    const { pollMs, doorbell } = this.options;
    const every = this.ringing && doorbell ? Math.max(pollMs, doorbell.safetyNetMs) : pollMs;
    return performance.now() - this.lastPollAt >= every - pollMs / 2;
  }

  private async tick(): Promise<void> {
    try {
      const { bus } = this.options;
      const claim = await bus.claim(this.topic);
      if (claim === null) {
        this.polling = false;
        // The copy holding the number answers the ring.
        this.ringPending = false;
        return;
      }
      // Taking over from another copy: continue from what it saw, not from scratch.
      if (!this.polling) this.seen = (await bus.loadSeen(this.topic)) ?? this.seen;
      if (claim === 'took-over') {
        this.options.observer?.takeover();
        this.options.logger?.info(
          { tid: this.target.tid },
          'live updates: took over polling a number from a copy that stopped renewing its lock',
        );
      }
      const due = !this.polling || this.ringPending || this.regularPollDue();
      this.polling = true;
      if (due) await this.pollAndPublish();
      if (this.stopped) return;
      // Saved on every tick, polled or not: it outlives a safety-net interval for a takeover.
      if (this.seen) await bus.saveSeen(this.topic, this.seen);
    } catch (error) {
      // The bus is unreachable (it logs once per outage); the next tick tries again.
      this.options.logger?.debug(
        { code: (error as { code?: string }).code },
        `live poll tick failed: ${(error as Error).message}`,
      );
    }
  }

  private async pollAndPublish(): Promise<void> {
    const announced = this.ringPending;
    this.ringPending = false;
    this.lastPollAt = performance.now();
    const events = await this.poll();
    if (this.stopped) return;
    const found = events.some((event) => event.kind === 'message' || event.kind === 'unreadable');
    if (this.ringing && found && !announced) this.bellSilent();
    if (events.length > 0) {
      await this.options.bus.publish(this.topic, events);
      this.options.observer?.published(events.filter((event) => event.kind !== 'head').length);
    }
  }

  /** A message came without a ring: the service no longer rings, so polls keep pollMs again. */
  private bellSilent(): void {
    this.ringing = false;
    this.options.logger?.info(
      { tid: this.target.tid },
      'live updates: a message arrived without its doorbell ringing; polling every LIVE_POLL_MS again until it rings',
    );
  }

  private async poll(): Promise<LiveEvent[]> {
    try {
      const page = await this.read(this.options.pageSize ?? 20);
      const previous = this.seen;
      this.failures = 0;
      if (!previous) {
        // Nothing is news on a first look; subscribers hear where the head stands.
        this.seen = seenFrom(page.totalCount, page.messages);
        return [{ kind: 'head', seq: page.totalCount - 1, total: page.totalCount }];
      }
      let detection = detectNew(previous, page.totalCount, page.messages, false);
      if (detection.kind === 'read-more') {
        const wider = await this.read(Math.min(detection.count, this.options.maxCatchUp ?? 200));
        detection = detectNew(previous, wider.totalCount, wider.messages, true);
      }
      if (detection.kind !== 'found') return [];
      this.seen = detection.next;
      // `added` is oldest first and sits at the head: the newest of them has seq total - 1.
      const { total } = detection.next;
      const first = total - detection.added.length;
      return detection.added.map((record, i) => sequencedEvent(record, first + i, total));
    } catch (error) {
      this.options.observer?.pollFailed();
      this.failures += 1;
      if (this.failures !== (this.options.failuresBeforeError ?? 3)) return [];
      const failing = `Live updates for ${this.target.tid} are failing`;
      const message = error instanceof UpstreamError ? `${failing}: ${error.message}` : failing;
      return [{ kind: 'error', code: failureCode(error), message }];
    }
  }

  private read(count: number) {
    return readNewest(this.options.client, this.credentials, this.target, count);
  }
}

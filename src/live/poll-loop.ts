/**
 * The poll loop of one topic (one account's number): every `pollMs`, if this copy holds the
 * topic (bus.claim), read the newest page through the traffic layer (deadline, breakers, 429,
 * fair share apply to polls as to queries), find what is new (detect.ts) and publish it, each
 * event with its place in the history (`seq`), which subscribers use to order, de-duplicate and
 * notice gaps (src/live/subscription.ts).
 *
 * A copy that does not hold the topic asks again every quarter interval, so when the holder dies
 * (its lock lapses 1.5 intervals after its last renewal) another takes over within two.
 *
 * A failed poll is simply tried again on the next tick; only when `failuresBeforeError` polls in
 * a row have failed is an error event published (once, until a poll succeeds again). A bus that
 * cannot be reached is not logged here: the bus logs one line per outage.
 */
import type { Credentials } from '../core/credentials.js';
import { isUnreadable } from '../core/domain.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from '../core/upstream-client.js';
import type { LiveBus, LiveEvent } from './bus.js';
import { detectNew, seenFrom, type SeenState } from './detect.js';
import type { LiveObserver } from './observer.js';

export interface PollLoopOptions {
  readonly pollMs: number;
  /** Messages read per poll; more only when more than this arrived. @default 20 */
  readonly pageSize?: number;
  /** Most messages read to catch up after a burst. @default 200 */
  readonly maxCatchUp?: number;
  /** Failed polls in a row before subscribers hear of it. @default 3 */
  readonly failuresBeforeError?: number;
  readonly logger?: Logger;
  readonly observer?: LiveObserver;
}

export interface PollTarget {
  readonly tid: string;
  readonly number: string;
}

export class PollLoop {
  private timer: NodeJS.Timeout | null = null;
  private seen: SeenState | null = null;
  /** Whether this copy polled the topic last tick (its `seen` is then current). */
  private polling = false;
  private failures = 0;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly topic: string,
    private readonly target: PollTarget,
    /** Held only while the loop runs: the first subscriber's (identical for all of them). */
    private readonly credentials: Credentials,
    private readonly client: UpstreamClient,
    private readonly bus: LiveBus,
    private readonly options: PollLoopOptions,
  ) {}

  start(): void {
    // The first tick at once: it learns what is there already, so only later arrivals are sent.
    this.schedule(0);
  }

  /** Stops polling; resolves once a poll under way has finished and the claim is released. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    if (this.polling) await this.bus.release(this.topic);
  }

  /** Whether this copy polls the topic now (holds its lock). */
  get holding(): boolean {
    return this.polling;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const started = Date.now();
      this.running = this.tick().finally(() => {
        // The holder keeps its cadence (the renewal must beat the lock's expiry); the others
        // ask four times per interval, so a lapsed lock is taken within a quarter interval: a
        // takeover 1.75 intervals after the last renewal at worst, under the 2 promised even
        // when a busy machine's timers run late.
        const every = this.polling ? this.options.pollMs : this.options.pollMs / 4;
        this.schedule(Math.max(0, every - (Date.now() - started)));
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    try {
      const claim = await this.bus.claim(this.topic);
      if (claim === null) {
        this.polling = false;
        return;
      }
      // Taking over from another copy: continue from what it saw, not from scratch.
      if (!this.polling) this.seen = (await this.bus.loadSeen(this.topic)) ?? this.seen;
      if (claim === 'took-over') {
        this.options.observer?.takeover();
        this.options.logger?.info(
          { tid: this.target.tid },
          'live updates: took over polling a number from a copy that stopped renewing its lock',
        );
      }
      this.polling = true;
      const events = await this.poll();
      if (this.stopped) return;
      if (events.length > 0) {
        await this.bus.publish(this.topic, events);
        this.options.observer?.published(events.filter((event) => event.kind !== 'head').length);
      }
      if (this.seen) await this.bus.saveSeen(this.topic, this.seen);
    } catch (error) {
      // The bus is unreachable: it logs once per outage; the next tick tries again.
      this.options.logger?.debug(
        { code: (error as { code?: string }).code },
        `live poll tick failed: ${(error as Error).message}`,
      );
    }
  }

  private async poll(): Promise<LiveEvent[]> {
    const pageSize = this.options.pageSize ?? 20;
    try {
      const page = await this.read(pageSize);
      const previous = this.seen;
      this.failures = 0;
      if (!previous) {
        // Nothing is news on a first look, but a subscriber that read the head before it would
        // miss what arrived in between: it hears where the head stands and checks.
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
      return detection.added.map((record, i): LiveEvent =>
        isUnreadable(record)
          ? {
              kind: 'unreadable',
              id: record.id,
              reason: record.error.message,
              seq: first + i,
              total,
            }
          : { kind: 'message', message: record, seq: first + i, total },
      );
    } catch (error) {
      this.options.observer?.pollFailed();
      this.failures += 1;
      const threshold = this.options.failuresBeforeError ?? 3;
      if (this.failures !== threshold) return [];
      const known = error instanceof UpstreamError;
      return [
        {
          kind: 'error',
          code: known ? error.code : ErrorCode.UpstreamError,
          message: known
            ? `Live updates for ${this.target.tid} are failing: ${error.message}`
            : `Live updates for ${this.target.tid} are failing`,
        },
      ];
    }
  }

  private read(count: number) {
    return this.client.history(this.credentials, {
      tid: this.target.tid,
      number: this.target.number,
      start: 0,
      end: count,
    });
  }
}

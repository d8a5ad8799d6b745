/**
 * The poll loop of one topic (one account's number; docs/live-updates.md "Polling and sharing"):
 * while this copy holds the topic (bus.claim), read the newest page, find what is new (detect.ts)
 * and publish it, each event with its `seq` (subscription.ts).
 */
import type { Credentials } from '../core/credentials.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from '../core/upstream-client.js';
import { sequencedEvent, type LiveBus, type LiveEvent } from './bus.js';
import { detectNew, seenFrom, type SeenState } from './detect.js';
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
}

export interface PollTarget {
  readonly tid: string;
  readonly number: string;
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

  constructor(
    private readonly topic: string,
    private readonly target: PollTarget,
    /** Held only while the loop runs: the first subscriber's (identical for all of them). */
    private readonly credentials: Credentials,
    private readonly options: PollLoopOptions,
  ) {}

  start(): void {
    // At once: it learns what is there already, so only later arrivals are sent.
    this.schedule(0);
  }

  /** Stops polling; resolves once a poll under way has finished and the claim is released. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.polling) await this.options.bus.release(this.topic);
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
        // The holder keeps its cadence (renewal must beat the lock's 1.5-interval expiry); the
        // others ask four times per interval: a takeover 1.75 intervals after the last renewal.
        const every = this.polling ? this.options.pollMs : this.options.pollMs / 4;
        this.schedule(Math.max(0, every - (Date.now() - started)));
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    try {
      const { bus } = this.options;
      const claim = await bus.claim(this.topic);
      if (claim === null) {
        this.polling = false;
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
      this.polling = true;
      const events = await this.poll();
      if (this.stopped) return;
      if (events.length > 0) {
        await bus.publish(this.topic, events);
        this.options.observer?.published(events.filter((event) => event.kind !== 'head').length);
      }
      if (this.seen) await bus.saveSeen(this.topic, this.seen);
    } catch (error) {
      // The bus is unreachable (it logs once per outage); the next tick tries again.
      this.options.logger?.debug(
        { code: (error as { code?: string }).code },
        `live poll tick failed: ${(error as Error).message}`,
      );
    }
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

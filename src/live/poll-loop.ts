/**
 * The poll loop of one topic (one account's number): every `pollMs`, if this copy holds the
 * topic (bus.claim), read the newest page through the traffic layer (deadline, breakers, 429,
 * fair share apply to polls as to queries), find what is new (detect.ts) and publish it.
 *
 * A failed poll is simply tried again on the next tick; only when `failuresBeforeError` polls in
 * a row have failed is an error event published (once, until a poll succeeds again).
 */
import type { Credentials } from '../core/credentials.js';
import { isUnreadable } from '../core/domain.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { LiveBus, LiveEvent } from './bus.js';
import { detectNew, seenFrom, type SeenState } from './detect.js';

export interface PollLoopOptions {
  readonly pollMs: number;
  /** Messages read per poll; more only when more than this arrived. @default 20 */
  readonly pageSize?: number;
  /** Most messages read to catch up after a burst. @default 200 */
  readonly maxCatchUp?: number;
  /** Failed polls in a row before subscribers hear of it. @default 3 */
  readonly failuresBeforeError?: number;
  readonly logger?: Logger;
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

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => this.schedule(this.options.pollMs));
    }, delayMs);
  }

  private async tick(): Promise<void> {
    try {
      const mine = await this.bus.claim(this.topic);
      if (!mine) {
        this.polling = false;
        return;
      }
      // Taking over from another copy: continue from what it saw, not from scratch.
      if (!this.polling) this.seen = (await this.bus.loadSeen(this.topic)) ?? this.seen;
      this.polling = true;
      const events = await this.poll();
      if (this.stopped) return;
      if (events.length > 0) await this.bus.publish(this.topic, events);
      if (this.seen) await this.bus.saveSeen(this.topic, this.seen);
    } catch (error) {
      this.options.logger?.warn(
        { code: (error as { code?: string }).code },
        `live poll failed: ${(error as Error).message}`,
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
        this.seen = seenFrom(page.totalCount, page.messages);
        return [];
      }
      let detection = detectNew(previous, page.totalCount, page.messages, false);
      if (detection.kind === 'read-more') {
        const wider = await this.read(Math.min(detection.count, this.options.maxCatchUp ?? 200));
        detection = detectNew(previous, wider.totalCount, wider.messages, true);
      }
      if (detection.kind !== 'found') return [];
      this.seen = detection.next;
      // A new record that cannot be read is one error event (that event's data is null); the
      // stream and the other new messages go on.
      return detection.added.map((record): LiveEvent =>
        isUnreadable(record)
          ? {
              kind: 'error',
              code: ErrorCode.UpstreamError,
              message: `A new message on ${this.target.tid} could not be read: ${record.error.message}`,
            }
          : { kind: 'message', message: record },
      );
    } catch (error) {
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

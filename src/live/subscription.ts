/**
 * One live subscriber: its position per number and its own bounded queue. A repeat (by `seq`) is
 * dropped; a gap, a fresh start and a resume are filled from the history. A reader `queueLimit`
 * behind ends with SLOW_CONSUMER; pushing never waits or throws, holding up no one.
 */
import type { Credentials } from '../core/credentials.js';
import { ErrorCode } from '../core/errors.js';
import type { UpstreamClient } from '../core/upstream-client.js';
import { sequencedEvent, type LiveEvent, type SequencedEvent as Sequenced } from './bus.js';
import type { LiveObserver } from './observer.js';
import { failureCode, readNewest, type PollTarget } from './poll-loop.js';

/** The last message a subscriber has of one number: its seq and id ('' when unknown). */
export interface Position {
  readonly seq: number;
  readonly id: string;
}

/** Resume point of a subscription: a position per tid. */
export type Positions = ReadonlyMap<string, Position>;

/** `positions`: set on SLOW_CONSUMER, where to resume. */
type Failure = Extract<LiveEvent, { kind: 'error' }> & { readonly positions: Positions | null };

/** An event of a number, with the resume point once it is taken; or a failure. */
export type Delivery<T extends PollTarget = PollTarget> =
  (Sequenced & { readonly target: T; readonly positions: Positions }) | Failure;

/** Queued, not yet taken; a sequenced event's position applies when taken. */
type Pending<T> =
  { readonly target: T; readonly position: Position; readonly event: Sequenced } | Failure;

interface Track<T> {
  readonly target: T;
  /** The last position queued; null until the first read of the history. */
  at: Position | null;
  /** Events held while the history is read. */
  buffer: Sequenced[];
  busy: boolean;
  /** The furthest head a poll loop's first look reported (-1: none): read up to it. */
  head: number;
  /** A resync came during a read: read again. */
  again: boolean;
}

export interface SubscriptionOptions<T extends PollTarget = PollTarget> {
  readonly client: UpstreamClient;
  /** Held while the subscription lives, to read the history. */
  readonly credentials: Credentials;
  readonly targets: readonly T[];
  /** Resume point; tids it does not name start at the head. */
  readonly start: Positions | null;
  readonly queueLimit: number;
  /** Most messages per number read from the history when resuming or filling a gap. */
  readonly resumeLimit: number;
  /** Wait before reading the history again after a failed read. */
  readonly retryMs: number;
  readonly observer?: LiveObserver;
  /** Called once when the subscription ends, however it ends. */
  readonly onEnd: () => void;
}

/** Messages read to learn the head, and enough to fill a small gap in the same call. */
const FIRST_READ = 20;

export class LiveSubscription<T extends PollTarget = PollTarget> implements AsyncIterableIterator<
  Delivery<T>
> {
  private readonly tracks = new Map<string, Track<T>>();
  /** Positions of what the reader has taken: the resume point. */
  private readonly taken = new Map<string, Position>();
  private queue: Pending<T>[] = [];
  private waiting: ((result: IteratorResult<Delivery<T>>) => void) | null = null;
  /** No more events accepted; the reader still takes what is queued. */
  private ended = false;
  private cleaned = false;
  private roomWaiters: Array<() => void> = [];

  constructor(private readonly options: SubscriptionOptions<T>) {
    for (const target of options.targets) {
      const from = options.start?.get(target.tid) ?? null;
      const track: Track<T> = { target, at: from, buffer: [], busy: false, head: -1, again: false };
      this.tracks.set(target.tid, track);
      if (from) this.taken.set(target.tid, from);
    }
  }

  /** Reads where each number stands (or what arrived since the resume point), then goes live. */
  begin(): void {
    for (const track of this.tracks.values()) void this.fill(track);
  }

  /** An event of one of its numbers, from the bus. */
  onEvent(tid: string, event: LiveEvent): void {
    const track = this.tracks.get(tid);
    if (!track || this.ended) return;
    if (event.kind === 'error') return this.push({ ...event, positions: null });
    if (event.kind === 'message' || event.kind === 'unreadable') return this.accept(track, event);
    if (event.kind === 'resync') track.again = true;
    else track.head = Math.max(track.head, event.seq);
    // A resync reads the history again; a head only once past what this subscriber has.
    if (event.kind === 'resync' || (track.at !== null && track.head > track.at.seq))
      void this.fill(track);
  }

  next(): Promise<IteratorResult<Delivery<T>>> {
    const item = this.queue.shift();
    if (item) return Promise.resolve({ value: this.take(item), done: false });
    if (this.ended) {
      this.cleanup();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<Delivery<T>>> {
    this.ended = true;
    this.queue = [];
    this.cleanup();
    // A read waiting for the next event ends now, or whoever awaits it would hold on.
    this.wake({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private accept(track: Track<T>, event: Sequenced): void {
    if (track.busy || track.at === null) {
      track.buffer.push(event);
      const most = this.options.queueLimit + this.options.resumeLimit;
      if (track.buffer.length > most) this.resyncRequired(track.target.tid);
      return;
    }
    if (event.seq <= track.at.seq) return;
    if (event.seq === track.at.seq + 1) return this.deliver(track, event);
    track.buffer.push(event);
    void this.fill(track);
  }

  private deliver(track: Track<T>, event: Sequenced): void {
    const id = event.kind === 'message' ? event.message.id : (event.id ?? '');
    track.at = { seq: event.seq, id };
    this.push({ target: track.target, position: track.at, event });
  }

  /** Reads the history up to its head and queues what this subscriber misses, then the buffer. */
  private async fill(track: Track<T>): Promise<void> {
    if (track.busy || this.ended) return;
    track.busy = true;
    track.again = false;
    for (;;) {
      try {
        await this.catchUp(track);
        break;
      } catch (error) {
        if (this.ended) return;
        this.push({
          kind: 'error',
          code: failureCode(error),
          message: `Live updates for ${track.target.tid} could not read the history; trying again`,
          positions: null,
        });
        await new Promise((resolve) => setTimeout(resolve, this.options.retryMs));
        if (this.ended) return;
      }
    }
    if (this.ended) return;
    track.busy = false;
    const buffered = track.buffer.sort((a, b) => a.seq - b.seq);
    track.buffer = [];
    for (const event of buffered) this.accept(track, event);
    if (!track.busy && track.at !== null && (track.again || track.head > track.at.seq))
      void this.fill(track);
  }

  private async catchUp(track: Track<T>): Promise<void> {
    const { tid } = track.target;
    const { client, credentials } = this.options;
    const read = (count: number) => readNewest(client, credentials, track.target, count);
    let page = await read(FIRST_READ);
    const at = track.at;
    if (at === null) {
      const newest = page.messages[0];
      track.at = { seq: page.totalCount - 1, id: newest ? (newest.id ?? '') : '' };
      this.taken.set(tid, track.at);
      return;
    }
    // Messages after `at`; the one at `at` is read too, to check it is still where it was.
    let missing = page.totalCount - 1 - at.seq;
    const reaches = () =>
      page.messages.length > missing || page.messages.length === page.totalCount;
    if (!reaches() && missing <= this.options.resumeLimit) {
      page = await read(missing + 1);
      missing = page.totalCount - 1 - at.seq;
    }
    // Checked on the last read: arrivals may have pushed it short of `at`.
    const anchor = page.messages[missing];
    const changed = anchor !== undefined && at.id !== '' && anchor.id !== at.id;
    if (missing < 0 || missing > this.options.resumeLimit || !reaches() || changed) {
      this.resyncRequired(tid);
      return;
    }
    const total = page.totalCount;
    for (let position = missing - 1; position >= 0; position -= 1) {
      const event = sequencedEvent(page.messages[position]!, total - 1 - position, total);
      // A resume never overflows its own queue; every take wakes every waiter, so check again.
      while (this.queue.length >= this.options.queueLimit && !this.ended)
        await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      if (this.ended) return;
      this.deliver(track, event);
    }
  }

  private push(item: Pending<T>): void {
    if (this.ended) return;
    if (this.waiting) return this.wake({ value: this.take(item), done: false });
    if (this.queue.length < this.options.queueLimit) {
      this.queue.push(item);
      return;
    }
    // Too slow: what is queued is dropped; the reader resumes from what it took.
    this.queue = [];
    this.options.observer?.dropped('slow');
    this.end({
      kind: 'error',
      code: ErrorCode.SlowConsumer,
      message: `This subscriber fell ${this.options.queueLimit} events behind and was ended; subscribe again with extensions.resumeToken to resume`,
      positions: new Map(this.taken),
    });
  }

  private resyncRequired(tid: string): void {
    if (this.ended) return;
    this.options.observer?.dropped('resync');
    this.end({
      kind: 'error',
      code: ErrorCode.ResyncRequired,
      message: `Live updates for ${tid} cannot resume: more than ${this.options.resumeLimit} messages arrived since, or the history changed. Refetch Number.messages, then subscribe again without a resume token`,
      positions: null,
    });
  }

  /** No more events: the stream ends once the reader has taken what is queued, `error` last. */
  end(error: Failure | null = null): void {
    if (this.ended) return;
    this.ended = true;
    if (error) this.queue.push(error);
    this.cleanup();
    if (this.waiting) {
      const item = this.queue.shift();
      this.wake(item ? { value: this.take(item), done: false } : { value: undefined, done: true });
    }
  }

  private wake(result: IteratorResult<Delivery<T>>): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.(result);
  }

  private take(item: Pending<T>): Delivery<T> {
    for (const wake of this.roomWaiters.splice(0)) wake();
    if (!('event' in item)) return item;
    this.taken.set(item.target.tid, item.position);
    return { ...item.event, target: item.target, positions: new Map(this.taken) };
  }

  private cleanup(): void {
    for (const wake of this.roomWaiters.splice(0)) wake();
    if (this.cleaned) return;
    this.cleaned = true;
    this.options.onEnd();
  }
}

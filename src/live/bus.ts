/**
 * Where live events travel between the poll loop of a topic (one account's number) and its
 * subscribers, and who polls: in one process (LocalBus) this copy; with Redis (redis-bus.ts) the
 * copy holding the topic's lock, every copy with subscribers listening on its channel.
 */
import { isUnreadable, type Message, type MessageRecord } from '../core/domain.js';
import type { SeenState } from './detect.js';

/**
 * A message's place in its history from the oldest (0). The service only adds at the head, so it
 * never changes: it orders and de-duplicates events, and a gap in it shows a lost event.
 */
interface Sequenced {
  readonly seq: number;
  /** total_message_count when the message was read (its position then: total - 1 - seq). */
  readonly total: number;
}

export type LiveEvent =
  | ({ readonly kind: 'message'; readonly message: Message } & Sequenced)
  /** A new record that could not be read: its place in the history, and why (safe to show). */
  | ({
      readonly kind: 'unreadable';
      readonly id: string | null;
      readonly reason: string;
    } & Sequenced)
  /** The topic's polls keep failing; `code` and `message` are safe to show a client. */
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  /** A poll loop's first look: a subscriber that read before it checks for what came between. */
  | ({ readonly kind: 'head' } & Sequenced)
  /** Never published: the bus may have lost events (a reconnect); listeners check the history. */
  | { readonly kind: 'resync' };

export type SequencedEvent = Extract<LiveEvent, { kind: 'message' | 'unreadable' }>;

/** The event of the record at `seq` of a history of `total` messages. */
export function sequencedEvent(record: MessageRecord, seq: number, total: number): SequencedEvent {
  return isUnreadable(record)
    ? { kind: 'unreadable', id: record.id, reason: record.error.message, seq, total }
    : { kind: 'message', message: record, seq, total };
}

/** held: this copy polled it already; acquired: it was free; took-over: its holder went quiet. */
export type Claim = 'held' | 'acquired' | 'took-over' | null;

export interface LiveBus {
  /** Delivers the topic's events to `listener` until the returned function is called. */
  listen(topic: string, listener: (event: LiveEvent) => void): Promise<() => Promise<void>>;
  publish(topic: string, events: readonly LiveEvent[]): Promise<void>;
  /** Should this copy poll the topic now (null: no)? Renews the claim of a copy that polls it. */
  claim(topic: string): Promise<Claim>;
  /** This copy stops polling the topic (its last subscriber left). */
  release(topic: string): Promise<void>;
  /** What the last poll of the topic saw, by whichever copy made it (null if unknown). */
  loadSeen(topic: string): Promise<SeenState | null>;
  saveSeen(topic: string, seen: SeenState): Promise<void>;
  /** A number's doorbell rang (doorbell.ts): every copy's ring listeners hear its tid. */
  publishRing(tid: string): Promise<void>;
  /** Hears every ring, this copy's too, until the returned function is called. */
  listenRings(listener: (tid: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * Adds `member` to `key`'s set in `groups`, made by the first. The returned function takes it out,
 * dropping the set with its last member: true when it did (the key has no members left).
 */
export function joinGroup<K, V>(groups: Map<K, Set<V>>, key: K, member: V): () => boolean {
  let set = groups.get(key);
  if (!set) groups.set(key, (set = new Set()));
  set.add(member);
  return () => {
    set.delete(member);
    if (set.size > 0 || groups.get(key) !== set) return false;
    groups.delete(key);
    return true;
  };
}

/** One process: this copy polls every topic it has subscribers for. */
export class LocalBus implements LiveBus {
  private readonly listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  private readonly ringListeners = new Set<(tid: string) => void>();

  async listen(topic: string, listener: (event: LiveEvent) => void) {
    const leave = joinGroup(this.listeners, topic, listener);
    return async () => void leave();
  }

  async publish(topic: string, events: readonly LiveEvent[]): Promise<void> {
    for (const listener of this.listeners.get(topic) ?? [])
      for (const event of events) listener(event);
  }

  async claim(): Promise<Claim> {
    return 'held';
  }

  async release(): Promise<void> {}

  // No other copy to hand the seen state to.
  async loadSeen(): Promise<SeenState | null> {
    return null;
  }

  async saveSeen(): Promise<void> {}

  async publishRing(tid: string): Promise<void> {
    for (const listener of this.ringListeners) listener(tid);
  }

  async listenRings(listener: (tid: string) => void): Promise<() => Promise<void>> {
    this.ringListeners.add(listener);
    return async () => void this.ringListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.ringListeners.clear();
  }
}

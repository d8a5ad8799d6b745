/**
 * Live updates shared by every gateway copy on one Redis. For each topic (an HMAC of the
 * credentials and number, never the credentials) one copy holds a lock and polls; it publishes
 * what it finds on the topic's channel, and every copy with subscribers listens there. The lock
 * expires `lockTtlMs` after its holder's last renewal, so when the polling copy goes away another
 * copy with subscribers takes over, continuing from the seen state the last poll stored.
 *
 * Pub/sub forgets what it could not deliver: after a reconnect of the subscriber connection
 * every listener gets a `resync` event and checks the history for what it missed.
 *
 * Keys and channels: sms-gateway:live:v1:{lock,seen,events}:<topic>.
 */
import { randomUUID } from 'node:crypto';
import type { Message } from '../core/domain.js';
import type { Logger } from '../observability/logger.js';
import {
  connectRedis,
  type RedisClient,
  type RedisConnection,
  type RedisTarget,
} from '../redis/connection.js';
import type { Claim, LiveBus, LiveEvent } from './bus.js';
import type { SeenState } from './detect.js';

const PREFIX = 'sms-gateway:live:v1:';
const lockKey = (topic: string): string => `${PREFIX}lock:${topic}`;
const seenKey = (topic: string): string => `${PREFIX}seen:${topic}`;
const channelOf = (topic: string): string => `${PREFIX}events:${topic}`;

/** Renews (or releases) a lock only while this copy holds it: compare and act in one step. */
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/**
 * Seen state is kept for a few lock lifetimes: enough for a takeover to continue from it. A
 * poll loop starting later learns afresh; subscribers never depend on it (they start from the
 * history's head and fill gaps from it).
 */
const SEEN_LIFETIMES = 10;

export interface RedisBusOptions {
  /** Where Redis is (src/redis): a connection is opened for live updates; or give `connection`. */
  readonly url?: RedisTarget;
  /** The live use's connection, opened by src/app.ts (its health feeds sms_redis_up). */
  readonly connection?: RedisConnection;
  /** How long a claim holds without renewal; a few poll intervals. */
  readonly lockTtlMs: number;
  readonly logger?: Logger | false;
}

export class RedisBus implements LiveBus {
  /** Identifies this copy's locks. */
  private readonly owner = randomUUID();
  private readonly connection: RedisConnection;
  private readonly commands: RedisClient;
  private readonly subscriber: RedisClient;
  private readonly listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  private resyncTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: RedisBusOptions) {
    // While disconnected, commands fail at once (the poll loop retries next tick) instead of
    // queueing behind the reconnect; the subscriber resubscribes by itself after a reconnect.
    // An outage is logged once, by the connection (src/redis).
    const given = options.connection;
    if (!given && !options.url) throw new Error('RedisBus: give a url or a connection');
    this.connection =
      given ??
      connectRedis(options.url as RedisTarget, 'live', {
        logger: options.logger ?? false,
        commandTimeoutMs: 1_000,
        messages: {
          down: 'live updates: Redis unavailable, polls wait for it',
          up: 'live updates: Redis reachable again',
        },
      });
    this.commands = this.connection.client;
    this.subscriber = this.connection.subscriber();
    // Back after a cut: whatever was published meanwhile is gone. Listeners check the history
    // now, and once more a lock lifetime later, by when a poll has found what arrived meanwhile
    // and the resubscription is surely in place.
    let subscriberCut = false;
    this.subscriber.on('close', () => (subscriberCut = true));
    this.subscriber.on('ready', () => {
      if (!subscriberCut) return;
      subscriberCut = false;
      this.resyncAll();
      if (this.resyncTimer) clearTimeout(this.resyncTimer);
      this.resyncTimer = setTimeout(() => this.resyncAll(), options.lockTtlMs);
      this.resyncTimer.unref();
    });
    this.subscriber.on('message', (channel: string, payload: string) => {
      const topic = channel.slice(channelOf('').length);
      const set = this.listeners.get(topic);
      if (!set) return;
      for (const event of decodeEvents(payload)) for (const listener of set) listener(event);
    });
  }

  async listen(topic: string, listener: (event: LiveEvent) => void): Promise<() => Promise<void>> {
    let set = this.listeners.get(topic);
    if (!set) {
      this.listeners.set(topic, (set = new Set()));
      await this.subscriber.subscribe(channelOf(topic));
    }
    set.add(listener);
    return async () => {
      set.delete(listener);
      if (set.size > 0 || this.listeners.get(topic) !== set) return;
      this.listeners.delete(topic);
      await this.subscriber.unsubscribe(channelOf(topic)).catch(() => undefined);
    };
  }

  private resyncAll(): void {
    for (const set of this.listeners.values()) {
      for (const listener of set) listener({ kind: 'resync' });
    }
  }

  async publish(topic: string, events: readonly LiveEvent[]): Promise<void> {
    await this.commands.publish(channelOf(topic), encodeEvents(events));
  }

  async claim(topic: string): Promise<Claim> {
    const ttl = String(this.options.lockTtlMs);
    const renewed = await this.commands.eval(RENEW, 1, lockKey(topic), this.owner, ttl);
    if (renewed === 1) return 'held';
    const taken = await this.commands.set(lockKey(topic), this.owner, 'PX', ttl, 'NX');
    if (taken !== 'OK') return null;
    // A poll stored its seen state recently and did not hand the lock back: its copy is gone.
    const seen = await this.commands.get(seenKey(topic));
    return seen !== null && !seen.includes('"released":true') ? 'took-over' : 'acquired';
  }

  async release(topic: string): Promise<void> {
    const released = await this.commands
      .eval(RELEASE, 1, lockKey(topic), this.owner)
      .catch(() => 0);
    if (released !== 1) return;
    // Handed back on purpose: whoever claims it next starts normally, not as a takeover.
    const raw = await this.commands.get(seenKey(topic)).catch(() => null);
    if (raw === null) return;
    const ttl = String(this.options.lockTtlMs * SEEN_LIFETIMES);
    await this.commands
      .set(seenKey(topic), `${raw.slice(0, -1)},"released":true}`, 'PX', ttl)
      .catch(() => undefined);
  }

  async loadSeen(topic: string): Promise<SeenState | null> {
    const raw = await this.commands.get(seenKey(topic));
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as Partial<SeenState>;
      if (typeof parsed.total !== 'number' || !Array.isArray(parsed.newestIds)) return null;
      return { total: parsed.total, newestIds: parsed.newestIds.map(String) };
    } catch {
      return null;
    }
  }

  async saveSeen(topic: string, seen: SeenState): Promise<void> {
    const ttl = this.options.lockTtlMs * SEEN_LIFETIMES;
    await this.commands.set(seenKey(topic), JSON.stringify(seen), 'PX', ttl);
  }

  async close(): Promise<void> {
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    this.listeners.clear();
    await this.connection.close();
  }
}

/** Messages carry a Date, which JSON turns into a string: revived on the way in. */
function encodeEvents(events: readonly LiveEvent[]): string {
  return JSON.stringify(events);
}

function decodeEvents(payload: string): LiveEvent[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const events: LiveEvent[] = [];
  for (const item of parsed as Array<Record<string, unknown>>) {
    const seq = Number(item.seq);
    const total = Number(item.total);
    const sequenced = Number.isSafeInteger(seq) && Number.isSafeInteger(total);
    if (sequenced && item.kind === 'message' && item.message && typeof item.message === 'object') {
      const message = item.message as Message & { sentAt: string };
      const revived = { ...message, sentAt: new Date(message.sentAt) };
      events.push({ kind: 'message', message: revived, seq, total });
    } else if (sequenced && item.kind === 'unreadable') {
      const id = typeof item.id === 'string' ? item.id : null;
      events.push({ kind: 'unreadable', id, reason: String(item.reason), seq, total });
    } else if (sequenced && item.kind === 'head') {
      events.push({ kind: 'head', seq, total });
    } else if (item.kind === 'error') {
      events.push({ kind: 'error', code: String(item.code), message: String(item.message) });
    }
  }
  return events;
}

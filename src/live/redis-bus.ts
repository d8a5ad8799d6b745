/**
 * Live updates shared by every gateway copy on one Redis. For each topic (an HMAC of the
 * credentials and number, never the credentials) one copy holds a lock and polls; it publishes
 * what it finds on the topic's channel, and every copy with subscribers listens there. The lock
 * expires `lockTtlMs` after its holder's last renewal, so when the polling copy goes away another
 * copy with subscribers takes over, continuing from the seen state the last poll stored.
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
import type { LiveBus, LiveEvent } from './bus.js';
import type { SeenState } from './detect.js';

const PREFIX = 'sms-gateway:live:v1:';
const lockKey = (topic: string): string => `${PREFIX}lock:${topic}`;
const seenKey = (topic: string): string => `${PREFIX}seen:${topic}`;
const channelOf = (topic: string): string => `${PREFIX}events:${topic}`;

/** Renews (or releases) a lock only while this copy holds it: compare and act in one step. */
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/** Seen state outlives a quiet hour without polls; older than that, a new poll starts afresh. */
const SEEN_TTL_MS = 3_600_000;

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

  async publish(topic: string, events: readonly LiveEvent[]): Promise<void> {
    await this.commands.publish(channelOf(topic), encodeEvents(events));
  }

  async claim(topic: string): Promise<boolean> {
    const ttl = String(this.options.lockTtlMs);
    const renewed = await this.commands.eval(RENEW, 1, lockKey(topic), this.owner, ttl);
    if (renewed === 1) return true;
    const taken = await this.commands.set(lockKey(topic), this.owner, 'PX', ttl, 'NX');
    return taken === 'OK';
  }

  async release(topic: string): Promise<void> {
    await this.commands.eval(RELEASE, 1, lockKey(topic), this.owner).catch(() => undefined);
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
    await this.commands.set(seenKey(topic), JSON.stringify(seen), 'PX', SEEN_TTL_MS);
  }

  async close(): Promise<void> {
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
    if (item.kind === 'message' && item.message && typeof item.message === 'object') {
      const message = item.message as Message & { sentAt: string };
      events.push({ kind: 'message', message: { ...message, sentAt: new Date(message.sentAt) } });
    } else if (item.kind === 'error') {
      events.push({ kind: 'error', code: String(item.code), message: String(item.message) });
    }
  }
  return events;
}

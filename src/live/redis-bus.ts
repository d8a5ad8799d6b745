/**
 * Live updates shared by the copies on one Redis (docs/live-updates.md "Across copies"): a topic's
 * lock lapses `lockTtlMs` after its last renewal, then another copy takes over from the stored seen
 * state. Values are sealed for their key or channel; one that does not open is ignored.
 */
import { randomUUID } from 'node:crypto';
import type { Message } from '../core/domain.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient, RedisConnection } from '../redis/connection.js';
import { createSeal, openWarningOnce, type Seal, type SealSecret } from '../redis/seal.js';
import { joinGroup, type Claim, type LiveBus, type LiveEvent } from './bus.js';
import type { SeenState } from './detect.js';

const PREFIX = 'sms-gateway:live:v1:';
const lockKey = (topic: string): string => `${PREFIX}lock:${topic}`;
const seenKey = (topic: string): string => `${PREFIX}seen:${topic}`;
const channelOf = (topic: string): string => `${PREFIX}events:${topic}`;
/** Every copy's doorbell rings (doorbell.ts): a sealed tid. */
const RINGS = `${PREFIX}rings`;

/** Renews (or releases) a lock only while this copy holds it: compare and act in one step. */
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/** Seen state is kept for a few lock lifetimes: enough for a takeover to continue from it. */
const SEEN_LIFETIMES = 10;

/** Logged once per copy, with nothing of what it held. */
const UNOPENED = 'live updates: ignored a value sealed under another secret, or altered';

interface RedisBusOptions {
  /** The live use's connection (src/start.ts); closed with the bus. */
  readonly connection: RedisConnection;
  /** How long a claim holds without renewal (rounded to a millisecond). */
  readonly lockTtlMs: number;
  readonly secret: SealSecret;
  readonly logger?: Logger | false;
}

/** A seen state as kept in Redis: `released` once its copy handed the lock back on purpose. */
interface StoredSeen extends SeenState {
  readonly released?: boolean;
}

export class RedisBus implements LiveBus {
  /** Identifies this copy's locks. */
  private readonly owner = randomUUID();
  private readonly commands: RedisClient;
  private readonly subscriber: RedisClient;
  /** Listeners by channel: a topic's events, and the rings (RINGS). */
  private readonly listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  private readonly ringListeners = new Map<string, Set<(tid: string) => void>>();
  private readonly seal: Seal;
  private readonly lockTtlMs: number;
  /** What was sealed for a key or channel, or null (ignored: it holds nothing this copy can use). */
  private readonly open: (sealed: Buffer, where: string) => string | null;
  private resyncTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: RedisBusOptions) {
    this.seal = createSeal(options.secret);
    this.open = openWarningOnce(this.seal, options.logger, UNOPENED);
    this.lockTtlMs = Math.max(1, Math.round(options.lockTtlMs));
    this.commands = options.connection.client;
    this.subscriber = options.connection.subscriber();
    // Back after a cut (pub/sub kept nothing): listeners check the history now, and again a lock
    // lifetime later, once a poll has found what arrived and the resubscription is in place.
    let subscriberCut = false;
    this.subscriber.on('close', () => (subscriberCut = true));
    this.subscriber.on('ready', () => {
      if (!subscriberCut) return;
      subscriberCut = false;
      this.resyncAll();
      if (this.resyncTimer) clearTimeout(this.resyncTimer);
      this.resyncTimer = setTimeout(() => this.resyncAll(), this.lockTtlMs);
      this.resyncTimer.unref();
    });
    this.subscriber.on('messageBuffer', (channelBytes: Buffer, payload: Buffer) => {
      const channel = channelBytes.toString();
      if (channel === RINGS) {
        const tid = this.open(payload, channel);
        if (tid !== null) for (const listener of this.ringListeners.get(RINGS) ?? []) listener(tid);
        return;
      }
      const set = this.listeners.get(channel);
      if (!set) return;
      const opened = previousReleaseClear(payload) ?? this.open(payload, channel);
      if (opened === null) return;
      for (const event of decodeEvents(opened)) for (const listener of set) listener(event);
    });
  }

  listen(topic: string, listener: (event: LiveEvent) => void): Promise<() => Promise<void>> {
    return this.join(this.listeners, channelOf(topic), listener);
  }

  /** Subscribes `channel` for its first listener; unsubscribes it when the last one leaves. */
  private async join<L>(groups: Map<string, Set<L>>, channel: string, listener: L) {
    if (!groups.has(channel)) {
      groups.set(channel, new Set());
      await this.subscriber.subscribe(channel);
    }
    const leave = joinGroup(groups, channel, listener);
    return async () => {
      if (leave()) await this.subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }

  private resyncAll(): void {
    for (const set of this.listeners.values())
      for (const listener of set) listener({ kind: 'resync' });
  }

  /** The topic's seen state, if there is one this copy can open and read. */
  private async readSeen(topic: string): Promise<StoredSeen | null> {
    const sealed = await this.commands.getBuffer(seenKey(topic));
    const raw = sealed && (previousReleaseClear(sealed) ?? this.open(sealed, seenKey(topic)));
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as Partial<StoredSeen>;
      if (typeof parsed.total !== 'number' || !Array.isArray(parsed.newestIds)) return null;
      const seen = { total: parsed.total, newestIds: parsed.newestIds.map(String) };
      return parsed.released === true ? { ...seen, released: true } : seen;
    } catch {
      return null;
    }
  }

  async publish(topic: string, events: readonly LiveEvent[]): Promise<void> {
    const channel = channelOf(topic);
    await this.commands.publish(channel, this.seal.seal(JSON.stringify(events), channel));
  }

  async claim(topic: string): Promise<Claim> {
    const ttl = String(this.lockTtlMs);
    const renewed = await this.commands.eval(RENEW, 1, lockKey(topic), this.owner, ttl);
    if (renewed === 1) return 'held';
    const taken = await this.commands.set(lockKey(topic), this.owner, 'PX', ttl, 'NX');
    if (taken !== 'OK') return null;
    // A poll stored its seen state recently and did not hand the lock back: its copy is gone.
    const seen = await this.readSeen(topic);
    return seen !== null && !seen.released ? 'took-over' : 'acquired';
  }

  async release(topic: string): Promise<void> {
    // Handed back on purpose, so the next claim is no takeover: marked while the lock is still
    // held, or a copy claiming in between would read the state of a copy gone quiet.
    const owned = await this.commands.get(lockKey(topic)).catch(() => null);
    if (owned !== this.owner) return;
    const seen = await this.readSeen(topic).catch(() => null);
    if (seen !== null)
      await this.saveSeen(topic, { ...seen, released: true }).catch(() => undefined);
    await this.commands.eval(RELEASE, 1, lockKey(topic), this.owner).catch(() => 0);
  }

  async loadSeen(topic: string): Promise<SeenState | null> {
    const seen = await this.readSeen(topic);
    return seen && { total: seen.total, newestIds: seen.newestIds };
  }

  async saveSeen(topic: string, { total, newestIds, released }: StoredSeen): Promise<void> {
    const sealed = this.seal.seal(JSON.stringify({ total, newestIds, released }), seenKey(topic));
    await this.commands.set(seenKey(topic), sealed, 'PX', this.lockTtlMs * SEEN_LIFETIMES);
  }

  async publishRing(tid: string): Promise<void> {
    await this.commands.publish(RINGS, this.seal.seal(tid, RINGS));
  }

  listenRings(listener: (tid: string) => void): Promise<() => Promise<void>> {
    return this.join(this.ringListeners, RINGS, listener);
  }

  async close(): Promise<void> {
    this.ringListeners.clear();
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    this.listeners.clear();
    await this.options.connection.close();
  }
}

/** The events published as JSON; a message's Date, a string in JSON, is revived. */
/**
 * What the previous release wrote in clear (JSON: a list of events, a seen state), read while both
 * releases run (docs/upgrading.md), so a subscriber on a new copy gets what an old copy polls
 * instead of waiting for the poll to move. A sealed value starts with its version byte (1), never
 * with `[` or `{`. Read, never written; the release after this one stops reading it.
 */
function previousReleaseClear(value: Buffer): string | null {
  return value[0] === 0x5b || value[0] === 0x7b ? value.toString('utf8') : null;
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

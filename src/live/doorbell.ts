/**
 * The doorbell (docs/live-updates.md "The doorbell"): the service calls a number's webhook when
 * something happens there; set to the gateway's signed URL for that number, the call means "look
 * now", whatever it says. A ring is published on the bus, so every copy hears it and the copy
 * polling the number polls it at once (poll-loop.ts); a number whose bell works is then polled
 * only as a safety net.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { joinGroup, type LiveBus } from './bus.js';

/** Rings of one number answered by at most one poll (and one bus message per copy) this often. */
export const DEFAULT_RING_GAP_MS = 1_000;
/**
 * Regular polls of a number whose bell works: a lost ring waits at most this long. At 200 numbers
 * a twentieth of LIVE_POLL_MS's calls (3 s); at 30 s it would be a tenth before any ring's poll.
 */
export const DEFAULT_SAFETY_NET_MS = 60_000;
/** A ring's body is never parsed: this much is read at most, a larger one is 413. */
export const RING_MAX_BODY_BYTES = 4 * 1024;
/** Numbers remembered by a copy's ring throttle; past it the oldest are forgotten. */
const THROTTLED_NUMBERS = 10_000;
/** Characters of the base64url HMAC in a URL: 132 bits, beyond guessing. */
const SIGNATURE_CHARS = 22;

/** What the doorbell wakes: the poll loop of a number (one per account watching it). */
export interface Ringable {
  ring(): void;
}

export interface DoorbellOptions {
  readonly bus: LiveBus;
  /** GATEWAY_SECRET (or this process's key): signs the URLs. */
  readonly key: Buffer | string;
  /** GATEWAY_SECRET_PREVIOUS: URLs it signed still ring after a rotation. */
  readonly previousKey?: string | null;
  /** Where the ring route is served (src/http/paths.ts), e.g. '/hooks/ring'. */
  readonly pathPrefix: string;
  /** The gateway's address as the service reaches it (GATEWAY_PUBLIC_URL); null: not known yet. */
  readonly publicUrl?: URL | null;
  /** @default DEFAULT_SAFETY_NET_MS */
  readonly safetyNetMs?: number;
  /** @default DEFAULT_RING_GAP_MS */
  readonly ringGapMs?: number;
}

export class Doorbell {
  readonly safetyNetMs: number;
  readonly ringGapMs: number;
  private readonly keys: ReadonlyArray<Buffer | string>;
  private base: string | null;
  /** The loops of this copy by tid: entries leave with the last loop, so bounded by what is watched. */
  private readonly loops = new Map<string, Set<Ringable>>();
  private readonly throttle: Throttle;
  private readonly listening: Promise<(() => Promise<void>) | null>;

  constructor(private readonly options: DoorbellOptions) {
    this.keys = [options.key, ...(options.previousKey ? [options.previousKey] : [])];
    this.safetyNetMs = options.safetyNetMs ?? DEFAULT_SAFETY_NET_MS;
    this.ringGapMs = options.ringGapMs ?? DEFAULT_RING_GAP_MS;
    this.base = options.publicUrl ? withoutTrailingSlash(options.publicUrl.href) : null;
    this.throttle = new Throttle(this.ringGapMs, THROTTLED_NUMBERS);
    // Every copy hears every ring, whichever copy it came to.
    this.listening = options.bus.listenRings((tid) => this.heard(tid)).catch(() => null);
  }

  /** The path that rings `tid` (signed with the current key). */
  pathOf(tid: string): string {
    return `${this.options.pathPrefix}/${encodeURIComponent(tid)}/${sign(this.options.key, tid)}`;
  }

  /** The URL to set as `tid`'s webhook at the service: absolute once the base is known. */
  urlOf(tid: string): string {
    return `${this.base ?? ''}${this.pathOf(tid)}`;
  }

  /** Demo mode without GATEWAY_PUBLIC_URL: the address this copy listens on (src/start.ts). */
  listeningAt(origin: string): void {
    this.base ??= withoutTrailingSlash(origin);
  }

  /** Whether `signature` is `tid`'s, under the current or the previous key (in constant time). */
  verify(tid: string, signature: string): boolean {
    const given = Buffer.from(signature);
    let valid = false;
    for (const key of this.keys) {
      const expected = Buffer.from(sign(key, tid));
      if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
    }
    return valid;
  }

  /** Whether `webhook` (a number's, as the service reports it) is this number's doorbell URL. */
  wired(tid: string, webhook: string | null | undefined): boolean {
    if (!webhook || !URL.canParse(webhook)) return false;
    const path = new URL(webhook).pathname;
    const prefix = `${this.options.pathPrefix}/${encodeURIComponent(tid)}/`;
    const at = path.lastIndexOf(prefix);
    return at >= 0 && this.verify(tid, path.slice(at + prefix.length));
  }

  /**
   * A verified ring of `tid` at this copy: published on the bus for every copy, at most once per
   * ring gap; rings inside the gap are folded into one published at its end, so none is lost.
   */
  ring(tid: string): void {
    this.throttle.run(tid, () => void this.options.bus.publishRing(tid).catch(() => undefined));
  }

  /** `loop` hears the rings of `tid` until the returned function is called. */
  watch(tid: string, loop: Ringable): () => void {
    return joinGroup(this.loops, tid, loop);
  }

  /** Numbers this copy watches, and numbers its ring throttle remembers. */
  get stats() {
    return { watched: this.loops.size, throttled: this.throttle.size };
  }

  /** Stops its timers; stops listening once listening has started (never waits on the bus). */
  close(): void {
    this.throttle.clear();
    void this.listening.then((unlisten) => unlisten?.().catch(() => undefined));
  }

  /** A ring from the bus (any copy's, this one's too). */
  private heard(tid: string): void {
    for (const loop of this.loops.get(tid) ?? []) loop.ring();
  }
}

function sign(key: Buffer | string, tid: string): string {
  return createHmac('sha256', key)
    .update('doorbell\u0000')
    .update(tid)
    .digest('base64url')
    .slice(0, SIGNATURE_CHARS);
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Runs a key's action at most once per `gapMs`: at once when the last run is older, else once at
 * the end of the gap (however many asked meanwhile). Remembers at most `cap` keys, the least
 * recently run forgotten first (a pending run with them).
 */
export class Throttle {
  private readonly entries: LRUCache<string, { at: number; timer: NodeJS.Timeout | null }>;

  constructor(
    private readonly gapMs: number,
    cap: number,
  ) {
    this.entries = new LRUCache({
      max: cap,
      dispose: ({ timer }) => clearTimeout(timer ?? undefined),
    });
  }

  get size(): number {
    return this.entries.size;
  }

  run(key: string, action: () => void): void {
    const now = performance.now();
    // peek: only a run counts as use, so the cache's order is the order of last run.
    const entry = this.entries.peek(key);
    if (entry && now - entry.at < this.gapMs) {
      if (entry.timer) return;
      entry.timer = setTimeout(
        () => {
          entry.timer = null;
          entry.at = performance.now();
          this.entries.set(key, entry);
          action();
        },
        entry.at + this.gapMs - now,
      );
      entry.timer.unref();
      return;
    }
    this.entries.set(key, { at: now, timer: null });
    action();
  }

  clear(): void {
    this.entries.clear();
  }
}

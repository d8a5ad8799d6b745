/**
 * Live subscriptions of this copy: one poll loop per topic, shared by its subscribers, started by
 * the first and stopped by the last. A topic is an HMAC of the credentials and tid: loops are
 * shared only by identical credentials, and no key or channel can be turned back into them.
 */
import { credentialsHmac, fingerprintKey, type Credentials } from '../core/credentials.js';
import { LocalBus, type LiveEvent } from './bus.js';
import type { Doorbell } from './doorbell.js';
import { SubscriptionAdmission, type AdmissionOptions } from '../traffic/subscription-admission.js';
import { PollLoop, type PollLoopOptions, type PollTarget } from './poll-loop.js';
import { LiveSubscription, type Delivery, type Positions } from './subscription.js';

export { SUBSCRIPTION_LIMIT } from '../traffic/subscription-admission.js';

/** Events a reader may fall behind before it is ended with SLOW_CONSUMER. */
const DEFAULT_QUEUE_LIMIT = 1_000;
/** Messages per number a resume token may be behind; further back is RESYNC_REQUIRED. */
const DEFAULT_RESUME_LIMIT = 200;

export interface LiveHubOptions extends PollLoopOptions {
  readonly maxPerAccount: number;
  /** Key of the topics' HMAC (GATEWAY_SECRET), shared by copies on one Redis. @default this process's */
  readonly hmacKey?: string | null;
  readonly queueLimit?: number;
  readonly resumeLimit?: number;
  readonly admission: Omit<AdmissionOptions, 'maxPerAccount'>;
}

type Listener = (event: LiveEvent) => void;

interface Topic {
  readonly loop: PollLoop;
  /** One per subscription; the topic stops when the last one leaves. */
  readonly listeners: Set<Listener>;
  /** Stops listening on the bus; set once listening has started. */
  readonly unlisten: Promise<() => Promise<void>>;
}

export class LiveHub {
  private readonly key: Buffer | string;
  private readonly topics = new Map<string, Topic>();
  private readonly subscriptions = new Set<{ end(): void }>();
  private readonly stopping = new Set<Promise<void>>();
  private closingNow = false;
  private readonly closeListeners = new Set<() => void>();
  /** Who may hold a subscription here (src/traffic/subscription-admission.ts). */
  readonly admission: SubscriptionAdmission;

  constructor(private readonly options: LiveHubOptions) {
    this.key = fingerprintKey(options.hmacKey);
    this.admission = new SubscriptionAdmission({
      ...options.admission,
      maxPerAccount: options.maxPerAccount,
    });
  }

  /** Topics polled (or listened to) by this copy now, subscriptions held, poll locks held. */
  get stats() {
    const locksHeld = [...this.topics.values()].filter((topic) => topic.loop.holding).length;
    return { topics: this.topics.size, subscriptions: this.subscriptions.size, locksHeld };
  }

  /** The numbers' doorbell (doorbell.ts); null without one. */
  get doorbell(): Doorbell | null {
    return this.options.doorbell ?? null;
  }

  /** True once close() was called: streams then end so that clients reconnect. */
  get closing(): boolean {
    return this.closingNow;
  }

  /** Calls `listener` as close() begins, before any subscription ends (graphql-sse's streams). */
  onClose(listener: () => void): void {
    this.closeListeners.add(listener);
  }

  /** Events of `targets` (the account's, checked by the caller); SUBSCRIPTION_LIMIT past the cap. */
  subscribe<T extends PollTarget>(
    credentials: Credentials,
    targets: readonly T[],
    start: Positions | null = null,
  ): AsyncIterableIterator<Delivery<T>> {
    const release = this.admission.hold(credentials);
    const joined: [topic: string, listener: Listener][] = [];
    const subscription: LiveSubscription<T> = new LiveSubscription({
      client: this.options.client,
      credentials,
      targets,
      start,
      queueLimit: this.options.queueLimit ?? DEFAULT_QUEUE_LIMIT,
      resumeLimit: this.options.resumeLimit ?? DEFAULT_RESUME_LIMIT,
      retryMs: this.options.pollMs,
      ...(this.options.observer ? { observer: this.options.observer } : {}),
      onEnd: () => {
        this.subscriptions.delete(subscription);
        release();
        for (const [topic, listener] of joined) this.leave(topic, listener);
      },
    });
    if (this.closingNow) {
      // Arriving as this copy drains: ended at once, as the others, so its client reconnects.
      subscription.begin();
      subscription.end();
      return subscription;
    }
    for (const target of targets) {
      const topic = credentialsHmac(this.key, credentials, target.tid);
      const listener: Listener = (event) => subscription.onEvent(target.tid, event);
      joined.push([topic, listener]);
      this.join(topic, target, credentials, listener);
    }
    this.subscriptions.add(subscription);
    subscription.begin();
    return subscription;
  }

  /**
   * Ends every stream once its reader has what was queued, and stops every loop. Seeing `closing`,
   * transports end so that clients reconnect (SSE without `complete`, WebSockets with 1001).
   */
  async close(): Promise<void> {
    this.closingNow = true;
    for (const listener of this.closeListeners) listener();
    // The WebSocket server closes its sockets first: "going away", never a final `complete`.
    await new Promise((resolve) => setImmediate(resolve));
    const held = this.stats.locksHeld;
    // Ending the last subscriber of a topic stops its loop (leave()); the others are stopped here.
    for (const subscription of [...this.subscriptions]) subscription.end();
    for (const topic of [...this.topics.keys()]) this.stopTopic(topic);
    // Locks are handed back before the bus closes, or the next copy would log a takeover.
    await Promise.allSettled([...this.stopping]);
    if (held > 0 && !(this.options.bus instanceof LocalBus))
      this.options.logger?.info(
        { numbers: held },
        'live updates: handed over polling to the other copies (draining)',
      );
    await this.options.bus.close();
  }

  private join(topic: string, target: PollTarget, credentials: Credentials, listener: Listener) {
    const existing = this.topics.get(topic);
    if (existing) {
      existing.listeners.add(listener);
      return;
    }
    const listeners = new Set([listener]);
    const loop = new PollLoop(topic, target, credentials, this.options);
    const unlisten = this.options.bus.listen(topic, (event) => {
      for (const each of listeners) {
        try {
          each(event);
        } catch (error) {
          // One subscriber's failure must not cost the others this event.
          this.options.logger?.error({ err: error }, 'live updates: a subscriber failed an event');
        }
      }
    });
    this.topics.set(topic, { loop, listeners, unlisten });
    // Poll only once listening: an event published meanwhile would be lost.
    void unlisten.then(
      () => loop.start(),
      (error: unknown) =>
        this.options.logger?.error({ err: error }, 'live updates: could not listen for events'),
    );
  }

  private leave(topic: string, listener: Listener): void {
    const entry = this.topics.get(topic);
    if (entry?.listeners.delete(listener) && entry.listeners.size === 0) this.stopTopic(topic);
  }

  /** Stops the loop, releases its lock and stops listening; close() waits for it. */
  private stopTopic(topic: string): void {
    const entry = this.topics.get(topic);
    if (!entry) return;
    this.topics.delete(topic);
    const stopped = (async () => {
      await entry.loop.stop();
      const unlisten = await entry.unlisten.catch(() => null);
      await unlisten?.();
    })();
    this.stopping.add(stopped);
    void stopped.finally(() => this.stopping.delete(stopped)).catch(() => undefined);
  }
}

/**
 * Live subscriptions of this copy: one poll loop per topic (the same credentials and number),
 * however many subscribers share it; started by the first, stopped when the last one leaves.
 * A topic is an HMAC of sys_id, token and tid under the gateway's secret (or this process's key
 * without one), so subscribers share a loop only if their credentials are identical, and nothing in a
 * key or channel can be turned back into credentials.
 *
 * Each subscriber is a LiveSubscription (subscription.ts): its own position per number and its
 * own bounded queue, so one slow reader never holds up the others.
 *
 * Credentials are held by a running loop only, in memory, for as long as a subscriber needs them.
 */
import {
  accountId,
  credentialsHmac,
  fingerprintKey,
  type Credentials,
} from '../core/credentials.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from '../core/upstream-client.js';
import { LocalBus, type LiveBus, type LiveEvent } from './bus.js';
import { SubscriptionAdmission, type AdmissionOptions } from '../traffic/subscription-admission.js';
import type { LiveObserver } from './observer.js';
import { PollLoop, type PollLoopOptions, type PollTarget } from './poll-loop.js';
import { LiveSubscription, type Delivery, type Positions } from './subscription.js';

export { SUBSCRIPTION_LIMIT } from '../traffic/subscription-admission.js';

/** Events a reader may fall behind before it is ended with SLOW_CONSUMER. */
export const DEFAULT_QUEUE_LIMIT = 1_000;
/** Messages per number a resume token may be behind; further back is RESYNC_REQUIRED. */
export const DEFAULT_RESUME_LIMIT = 200;

export interface LiveHubOptions extends PollLoopOptions {
  readonly client: UpstreamClient;
  readonly bus: LiveBus;
  /** Live subscriptions one account may hold on this copy. */
  readonly maxPerAccount: number;
  /** Key of the topics' HMAC (GATEWAY_SECRET): the same on every copy sharing a Redis. @default this process's key */
  readonly hmacKey?: string | null;
  /** @default DEFAULT_QUEUE_LIMIT */
  readonly queueLimit?: number;
  /** @default DEFAULT_RESUME_LIMIT */
  readonly resumeLimit?: number;
  readonly logger?: Logger;
  readonly observer?: LiveObserver;
  /** Admission (src/traffic/subscription-admission.ts): per-copy cap, account names, verifying. */
  readonly admission?: Omit<AdmissionOptions, 'maxPerAccount'>;
}

interface Topic {
  readonly loop: PollLoop;
  subscribers: number;
  /** Stops listening on the bus; set once listening has started. */
  readonly unlisten: Promise<() => Promise<void>>;
}

export class LiveHub {
  private readonly key: Buffer | string;
  private readonly topics = new Map<string, Topic>();
  private readonly listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  private readonly subscriptions = new Set<LiveSubscription>();
  /** Topics being stopped (loop stopped, lock released, bus listener removed). */
  private readonly stopping = new Set<Promise<void>>();
  private closingNow = false;
  private readonly closeListeners = new Set<() => void>();
  private readonly admission: SubscriptionAdmission;

  constructor(private readonly options: LiveHubOptions) {
    this.key = fingerprintKey(options.hmacKey);
    this.admission = new SubscriptionAdmission({
      // The account's name, as Identities makes it (app.ts passes the copy's Identities').
      accountOf: (credentials) => accountId(this.key, credentials.sysId),
      ...options.admission,
      maxPerAccount: options.maxPerAccount,
    });
  }

  /**
   * Resolves once the service accepts these credentials (src/traffic/subscription-admission.ts);
   * else UNAUTHENTICATED.
   */
  verified(credentials: Credentials): Promise<void> {
    return this.admission.verified(credentials);
  }

  /** Topics polled (or listened to) by this copy now, subscriptions held, poll locks held. */
  get stats(): {
    readonly topics: number;
    readonly subscriptions: number;
    readonly locksHeld: number;
  } {
    let locksHeld = 0;
    for (const topic of this.topics.values()) if (topic.loop.holding) locksHeld += 1;
    return { topics: this.topics.size, subscriptions: this.subscriptions.size, locksHeld };
  }

  /** True once close() was called: streams then end so that clients reconnect. */
  get closing(): boolean {
    return this.closingNow;
  }

  /**
   * Calls `listener` once, as close() begins and before any subscription ends: a transport that
   * holds streams of its own (graphql-sse's single connection mode) ends them first.
   */
  onClose(listener: () => void): void {
    this.closeListeners.add(listener);
  }

  /**
   * The events of `targets` (numbers the account owns, checked by the caller) for as long as the
   * consumer reads them, from `start` (a resume point) or from now. Throws SUBSCRIPTION_LIMIT at
   * once when the account has too many.
   */
  subscribe(
    credentials: Credentials,
    targets: readonly PollTarget[],
    start: Positions | null = null,
  ): AsyncIterableIterator<Delivery> {
    const release = this.admission.hold(credentials);
    const topics = targets.map((target) => this.fingerprint(credentials, target.tid));
    const listeners: Array<(event: LiveEvent) => void> = [];
    const subscription: LiveSubscription = new LiveSubscription({
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
        for (const [i, topic] of topics.entries()) {
          this.removeListener(topic, listeners[i]!);
          void this.leave(topic);
        }
      },
    });
    if (this.closingNow) {
      // A subscription that arrives as this copy drains (a client reconnecting on a connection
      // still open) ends at once, as close() ended the others: its client reconnects elsewhere.
      subscription.begin();
      subscription.end();
      return subscription;
    }
    for (const [i, topic] of topics.entries()) {
      const target = targets[i] as PollTarget;
      const listener = (event: LiveEvent): void => subscription.onEvent(target.tid, event);
      listeners.push(listener);
      this.addListener(topic, listener);
      this.join(topic, target, credentials);
    }
    this.subscriptions.add(subscription);
    subscription.begin();
    return subscription;
  }

  /**
   * Ends every stream once its reader has what was queued, and stops every loop. The transports
   * see `closing`: SSE streams end without `complete` and WebSockets close with 1001, both of
   * which clients reconnect from.
   */
  async close(): Promise<void> {
    this.closingNow = true;
    for (const listener of this.closeListeners) listener();
    // Let the WebSocket server close its sockets first (same tick), so a graphql-ws client gets
    // "going away", never a `complete` it would take as final.
    await new Promise((resolve) => setImmediate(resolve));
    let held = 0;
    for (const topic of this.topics.values()) if (topic.loop.holding) held += 1;
    // Ending the last subscriber of a topic stops its loop (leave()); the others are stopped here.
    for (const subscription of [...this.subscriptions]) subscription.end();
    for (const topic of [...this.topics.keys()]) void this.stopTopic(topic);
    // Every loop hands its lock back before the bus closes: the copy that polls next continues
    // from the seen state as after a handover. Closing first lost the releases, and each drain
    // showed up on the next copy as a takeover from a copy that had gone quiet.
    await Promise.allSettled([...this.stopping]);
    if (held > 0 && !(this.options.bus instanceof LocalBus)) {
      this.options.logger?.info(
        { numbers: held },
        'live updates: handed over polling to the other copies (draining)',
      );
    }
    await this.options.bus.close();
  }

  // --- Topics: one poll loop and one bus listener per topic. ---------------------------------

  private fingerprint(credentials: Credentials, tid: string): string {
    return credentialsHmac(this.key, credentials, tid);
  }

  private join(topic: string, target: PollTarget, credentials: Credentials): void {
    const existing = this.topics.get(topic);
    if (existing) {
      existing.subscribers += 1;
      return;
    }
    const loop = new PollLoop(
      topic,
      target,
      credentials,
      this.options.client,
      this.options.bus,
      this.options,
    );
    const unlisten = this.options.bus.listen(topic, (event) => {
      for (const listener of this.listeners.get(topic) ?? []) {
        try {
          listener(event);
        } catch (error) {
          // One subscriber's failure must not cost the others this event.
          this.options.logger?.error({ err: error }, 'live updates: a subscriber failed an event');
        }
      }
    });
    this.topics.set(topic, { loop, subscribers: 1, unlisten });
    // Poll only once listening: an event published meanwhile would be lost.
    void unlisten.then(
      () => loop.start(),
      (error: unknown) =>
        this.options.logger?.error({ err: error }, 'live updates: could not listen for events'),
    );
  }

  private async leave(topic: string): Promise<void> {
    const entry = this.topics.get(topic);
    if (!entry) return;
    entry.subscribers -= 1;
    if (entry.subscribers === 0) await this.stopTopic(topic);
  }

  private stopTopic(topic: string): Promise<void> {
    const entry = this.topics.get(topic);
    if (!entry) return Promise.resolve();
    this.topics.delete(topic);
    const stopped = (async () => {
      await entry.loop.stop();
      await (
        await entry.unlisten.catch(() => () => Promise.resolve())
      )();
    })();
    // close() waits for it, however the stop began.
    this.stopping.add(stopped);
    void stopped.finally(() => this.stopping.delete(stopped)).catch(() => undefined);
    return stopped;
  }

  private addListener(topic: string, listener: (event: LiveEvent) => void): void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
  }

  private removeListener(topic: string, listener: (event: LiveEvent) => void): void {
    const set = this.listeners.get(topic);
    set?.delete(listener);
    if (set?.size === 0) this.listeners.delete(topic);
  }
}

/**
 * Live subscriptions of this copy: one poll loop per topic (the same credentials and number),
 * however many subscribers share it; started by the first, stopped when the last one leaves.
 * A topic is an HMAC of sys_id, token and tid under the shared key (or a random one without
 * Redis), so subscribers share a loop only if their credentials are identical, and nothing in a
 * key or channel can be turned back into credentials.
 *
 * Credentials are held by a running loop only, in memory, for as long as a subscriber needs them.
 */
import { randomBytes } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { Repeater } from 'graphql-yoga';
import { credentialsHmac, type Credentials } from '../core/credentials.js';
import { ErrorCode } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { LiveBus, LiveEvent } from './bus.js';
import { PollLoop, type PollLoopOptions, type PollTarget } from './poll-loop.js';

export const SUBSCRIPTION_LIMIT = ErrorCode.SubscriptionLimit;

export interface LiveHubOptions extends PollLoopOptions {
  readonly client: UpstreamClient;
  readonly bus: LiveBus;
  /** Live subscriptions one account may hold on this copy. */
  readonly maxPerAccount: number;
  /** Key of the topics' HMAC: the same on every copy sharing a Redis. @default random */
  readonly hmacKey?: string | null;
  readonly logger?: Logger;
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
  private readonly perAccount = new Map<string, number>();
  private readonly listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  /** How to end each open stream, for shutdown. */
  private readonly streams = new Set<() => void>();

  constructor(private readonly options: LiveHubOptions) {
    this.key = options.hmacKey ?? randomBytes(32);
  }

  /** Topics polled (or listened to) by this copy now, and subscriptions held. */
  get stats(): { readonly topics: number; readonly subscriptions: number } {
    let subscriptions = 0;
    for (const count of this.perAccount.values()) subscriptions += count;
    return { topics: this.topics.size, subscriptions };
  }

  /**
   * The events of `targets` (numbers the account owns, checked by the caller) for as long as the
   * consumer reads them. Throws SUBSCRIPTION_LIMIT at once when the account has too many.
   */
  subscribe(credentials: Credentials, targets: readonly PollTarget[]): AsyncIterable<LiveEvent> {
    const account = this.fingerprint(credentials, '');
    const held = this.perAccount.get(account) ?? 0;
    if (held >= this.options.maxPerAccount) {
      throw new GraphQLError(
        `This account already holds ${this.options.maxPerAccount} live subscriptions, the most allowed; close one first`,
        { extensions: { code: SUBSCRIPTION_LIMIT } },
      );
    }
    this.perAccount.set(account, held + 1);
    return new Repeater<LiveEvent>(async (push, stop) => {
      const topics = targets.map((target) => this.fingerprint(credentials, target.tid));
      const deliver = (event: LiveEvent): void => void push(event);
      for (const [i, topic] of topics.entries()) {
        this.addListener(topic, deliver);
        this.join(topic, targets[i] as PollTarget, credentials);
      }
      const end = (): void => void stop();
      this.streams.add(end);
      await stop;
      this.streams.delete(end);
      const remaining = (this.perAccount.get(account) ?? 1) - 1;
      if (remaining > 0) this.perAccount.set(account, remaining);
      else this.perAccount.delete(account);
      await Promise.all(
        topics.map((topic) => {
          this.removeListener(topic, deliver);
          return this.leave(topic);
        }),
      );
    });
  }

  /** Ends every stream (their transports then close them cleanly) and stops every loop. */
  async close(): Promise<void> {
    for (const end of [...this.streams]) end();
    const topics = [...this.topics.keys()];
    await Promise.all(topics.map((topic) => this.stopTopic(topic)));
    await this.options.bus.close();
  }

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
      for (const listener of this.listeners.get(topic) ?? []) listener(event);
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

  private async stopTopic(topic: string): Promise<void> {
    const entry = this.topics.get(topic);
    if (!entry) return;
    this.topics.delete(topic);
    await entry.loop.stop();
    await (
      await entry.unlisten.catch(() => () => Promise.resolve())
    )();
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

/**
 * Identical calls in flight are made once, across requests (docs/cache.md). A call carries no
 * request's abort signal (the traffic layer's deadline bounds it), so no caller cancels it for all.
 */
import type { Credentials } from '../core/credentials.js';
import type { CallOptions } from '../core/upstream-client.js';
import type { UpstreamObserver, UpstreamOperation } from '../core/signals.js';
import type { ManagedUpstreamClient } from '../traffic/traffic.js';

/** How long before a request arrived a call it joins may have been sent: under load, most were. */
export const JOIN_WINDOW_MS = 50;

export function shareCallsInFlight(
  client: ManagedUpstreamClient,
  observer: Pick<UpstreamObserver, 'joined'> = {},
): ManagedUpstreamClient {
  const inFlight = new Map<string, { answer: Promise<unknown>; sentAt: number }>();

  function shared<T>(
    operation: UpstreamOperation,
    credentials: Credentials,
    args: string,
    options: CallOptions | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    // The pair's keyed hash, never the token itself, names the entry.
    const key = `${operation}\u0000${client.credentials.identities.of(credentials).pair}\u0000${args}`;
    const pending = inFlight.get(key);
    if (pending && pending.sentAt >= (options?.arrivedAt ?? performance.now()) - JOIN_WINDOW_MS) {
      observer.joined?.(operation);
      return pending.answer as Promise<T>;
    }
    const entry = { answer: call(), sentAt: performance.now() };
    inFlight.set(key, entry);
    const forget = (): void => {
      if (inFlight.get(key) === entry) inFlight.delete(key);
    };
    entry.answer.then(forget, forget);
    return entry.answer as Promise<T>;
  }

  return {
    ...client,
    history: (credentials, request, options) =>
      shared(
        'smshistory',
        credentials,
        `${request.tid}\u0000${request.number}\u0000${request.start}\u0000${request.end}`,
        options,
        () => client.history(credentials, request),
      ),
    ownedNumbers: (credentials, type, options) =>
      shared('ownednumbers', credentials, type, options, () =>
        client.ownedNumbers(credentials, type),
      ),
    allOwnedNumbers: (credentials, options) =>
      shared('allownednumbers', credentials, '', options, () =>
        client.allOwnedNumbers(credentials),
      ),
  };
}

/**
 * Identical calls in flight are made once, across requests (docs/cache.md). A call carries no
 * request's abort signal (the traffic layer's deadline bounds it), so no caller cancels it for all;
 * it carries its caller, the request's, or for a call without one (a poll) named here once.
 */
import type { Credentials } from '../core/credentials.js';
import type { Caller, CallOptions } from '../core/upstream-client.js';
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
    call: (made: CallOptions & { caller: Caller }) => Promise<T>,
  ): Promise<T> {
    const caller =
      options?.caller ?? client.callerOf(client.credentials.identities.of(credentials));
    // The pair's keyed hash, never the token itself, names the entry.
    const key = `${operation}\u0000${caller.identity.pair}\u0000${args}`;
    const pending = inFlight.get(key);
    if (pending && pending.sentAt >= (options?.arrivedAt ?? performance.now()) - JOIN_WINDOW_MS) {
      observer.joined?.(operation);
      return pending.answer as Promise<T>;
    }
    // A joined call is traced under the operation that sent it.
    const entry = { answer: call({ caller, trace: options?.trace }), sentAt: performance.now() };
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
        (made) => client.history(credentials, request, made),
      ),
    ownedNumbers: (credentials, type, options) =>
      shared('ownednumbers', credentials, type, options, (made) =>
        client.ownedNumbers(credentials, type, made),
      ),
    allOwnedNumbers: (credentials, options) =>
      shared('allownednumbers', credentials, '', options, (made) =>
        client.allOwnedNumbers(credentials, made),
      ),
  };
}

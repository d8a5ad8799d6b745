/**
 * Identical calls in flight at once are made once, across requests: a call asked for while the
 * same one (same credential pair, operation and arguments) is already on its way waits for that
 * one's answer instead of sending its own. Every operation of the service is a read, so the
 * answer is one the later caller could have got itself; it is at most as old as the call it
 * joins (one round trip), and the entry goes the moment the call settles, so nothing is cached.
 *
 * A team sharing one inbox from many connections asks for the same numbers and pages at the
 * same moments: this turns those into one call (and one slot of the account's fair share)
 * instead of one each. A call carries no request's abort signal (the traffic layer's deadline
 * bounds it), so one caller leaving cannot cancel it for the others. Answers are shared
 * read-only records; nothing downstream mutates them.
 */
import type { Credentials } from '../core/credentials.js';
import type { UpstreamObserver, UpstreamOperation } from '../core/signals.js';
import type { ManagedUpstreamClient } from '../traffic/traffic.js';

export function shareCallsInFlight(
  client: ManagedUpstreamClient,
  observer: Pick<UpstreamObserver, 'joined'> = {},
): ManagedUpstreamClient {
  const inFlight = new Map<string, Promise<unknown>>();

  function shared<T>(
    operation: UpstreamOperation,
    credentials: Credentials,
    args: string,
    call: () => Promise<T>,
  ): Promise<T> {
    // The pair's keyed hash, never the token itself, names the entry.
    const key = `${operation}\u0000${client.credentials.identities.of(credentials).pair}\u0000${args}`;
    const pending = inFlight.get(key) as Promise<T> | undefined;
    if (pending) {
      observer.joined?.(operation);
      return pending;
    }
    const started = call();
    inFlight.set(key, started);
    const forget = (): void => {
      inFlight.delete(key);
    };
    started.then(forget, forget);
    return started;
  }

  return {
    ...client,
    history: (credentials, request) =>
      shared(
        'smshistory',
        credentials,
        `${request.tid}\u0000${request.number}\u0000${request.start}\u0000${request.end}`,
        () => client.history(credentials, request),
      ),
    ownedNumbers: (credentials, type) =>
      shared('ownednumbers', credentials, type, () => client.ownedNumbers(credentials, type)),
    allOwnedNumbers: (credentials) =>
      shared('allownednumbers', credentials, '', () => client.allOwnedNumbers(credentials)),
  };
}

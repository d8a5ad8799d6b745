/**
 * Identical calls in flight at once are made once, across requests: a call asked for while the
 * same one (same credential pair, operation and arguments) is already on its way waits for that
 * one's answer instead of sending its own. Every operation of the service is a read. A caller
 * joins only a call sent at most JOIN_WINDOW_MS before its request arrived
 * (`CallOptions.arrivedAt`), so an answer never reflects the service from longer before the
 * request than that: a slow service's call, seconds old, is not joined. The entry goes the moment
 * the call settles, so nothing is cached.
 *
 * A team sharing one inbox from many connections asks for the same numbers and pages at the
 * same moments: this turns those into one call (and one slot of the account's fair share)
 * instead of one each. A call carries no request's abort signal (the traffic layer's deadline
 * bounds it), so one caller leaving cannot cancel it for the others. Answers are shared
 * read-only records; nothing downstream mutates them.
 */
import type { Credentials } from '../core/credentials.js';
import type { CallOptions } from '../core/upstream-client.js';
import type { UpstreamObserver, UpstreamOperation } from '../core/signals.js';
import type { ManagedUpstreamClient } from '../traffic/traffic.js';

/**
 * How long before a request arrived a call it joins may have been sent. Under load a request's
 * identical calls were almost all sent before it arrived (from 32 connections of one account,
 * joining only calls sent since it arrived shared next to none: 0.30-0.39 ms of CPU a request, as
 * with no sharing, against 0.18 ms); 50 ms covers a loaded copy's wait and a service's usual
 * latency, and is as fresh as a screen can show.
 */
export const JOIN_WINDOW_MS = 50;

export function shareCallsInFlight(
  client: ManagedUpstreamClient,
  observer: Pick<UpstreamObserver, 'joined'> = {},
): ManagedUpstreamClient {
  const inFlight = new Map<
    string,
    { readonly answer: Promise<unknown>; readonly sentAt: number }
  >();

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
    // None, or sent too long before this caller's request arrived: a call of its own, which later
    // callers join instead.
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

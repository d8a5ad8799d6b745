/**
 * Per-request upstream access, dropped with its request, so nothing here reaches another. Within
 * a request: identical calls are made once; history ranges of one number share calls (ranges.ts);
 * owned-number needs share one call (typed when only one type is asked for); and at most
 * `maxCalls` calls are made, backing up the static cost limit (list lengths are known only now).
 */
import type { Context } from '@opentelemetry/api';
import DataLoader from 'dataloader';
import type { Credentials } from '../core/credentials.js';
import type { History, HistoryRequest, NumberType, OwnedNumber, Range } from '../core/domain.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Caller, UpstreamClient } from '../core/upstream-client.js';
import { coalesceRanges, sliceFor } from './ranges.js';

export type RequestLoaders = ReturnType<typeof createRequestLoaders>;

export interface RequestLoaderOptions {
  /** Upstream calls this request may make in all. */
  readonly maxCalls: number;
  /** Widest history call made by merging ranges (one range wider than it still gets its call). */
  readonly maxCallSpan: number;
  /** When the request arrived (CallOptions.arrivedAt). */
  readonly arrivedAt: number;
  /** Who the request's calls are for (CallOptions.caller). */
  readonly caller?: Caller;
  /** The operation span's context, when traced (CallOptions.trace). */
  readonly trace?: Context;
}

type NumbersScope = 'LOCAL' | 'TOLLFREE' | 'ALL';

export function createRequestLoaders(
  client: UpstreamClient,
  credentials: Credentials,
  options: RequestLoaderOptions,
) {
  const { arrivedAt, caller, trace } = options;
  const callOptions = { arrivedAt, caller, trace };
  let calls = 0;
  async function limit<T>(call: () => Promise<T>): Promise<T> {
    calls += 1;
    if (calls > options.maxCalls) {
      throw new UpstreamError(
        ErrorCode.UpstreamCallLimit,
        `This request needs more than ${options.maxCalls} calls to the SMS service; ask for fewer histories at once`,
      );
    }
    return call();
  }

  const numberLists = new DataLoader<NumbersScope, readonly OwnedNumber[]>(async (scopes) => {
    const [only] = scopes;
    if (scopes.length === 1 && only !== undefined && only !== 'ALL') {
      const list = await limit(() => client.ownedNumbers(credentials, only, callOptions));
      // The typed call is documented to return only that type; filtering keeps that a guarantee.
      return [ofType(list, only)];
    }
    const all = await limit(() => client.allOwnedNumbers(credentials, callOptions));
    return scopes.map((scope) => (scope === 'ALL' ? all : ofType(all, scope)));
  });

  // Once the full list is asked for, later typed needs are derived from it instead of calling again.
  let allRequested = false;
  function loadAll(): Promise<readonly OwnedNumber[]> {
    allRequested = true;
    return numberLists.load('ALL');
  }

  let indexed: { list: readonly OwnedNumber[]; byTid: Map<string, OwnedNumber> } | undefined;

  const histories = new DataLoader<HistoryRequest, History, string>(
    async (requests) => {
      const results = new Array<History | Error>(requests.length);
      const calls = byNumber(requests).flatMap((group) =>
        coalesceRanges(
          group.map((i) => requests[i]!),
          options.maxCallSpan,
        ).map(async (call) => {
          const members = call.members.map((m) => group[m]!);
          const request = { ...requests[members[0]!]!, ...call.range };
          try {
            const history = await limit(() => client.history(credentials, request, callOptions));
            for (const i of members) results[i] = sliceHistory(history, call.range, requests[i]!);
          } catch (error) {
            // One failed call fails only the fields it serves: their slots carry the Error.
            for (const i of members) results[i] = toError(error);
          }
        }),
      );
      await Promise.all(calls);
      return results;
    },
    { cacheKeyFn: (r) => `${r.tid}\u0000${r.number}\u0000${r.start}\u0000${r.end}` },
  );

  return {
    /** Owned numbers, of one type or (without a type) all of them. */
    ownedNumbers(type?: NumberType): Promise<readonly OwnedNumber[]> {
      if (type === undefined) return loadAll();
      // Numbers of an unrecognised type can only be found in the full list.
      if (type === 'UNKNOWN' || allRequested) return loadAll().then((all) => ofType(all, type));
      return numberLists.load(type);
    },
    /** The account's number with this tid, or null when it owns none. */
    async numberByTid(tid: string): Promise<OwnedNumber | null> {
      const list = await loadAll();
      if (indexed?.list !== list) indexed = { list, byTid: new Map(list.map((n) => [n.tid, n])) };
      return indexed.byTid.get(tid) ?? null;
    },
    history(request: HistoryRequest): Promise<History> {
      return histories.load(request);
    },
  };
}

function ofType(list: readonly OwnedNumber[], type: NumberType): readonly OwnedNumber[] {
  return list.every((n) => n.type === type) ? list : list.filter((n) => n.type === type);
}

/** Indexes of the requests, grouped by the number they read. */
function byNumber(requests: readonly HistoryRequest[]): number[][] {
  const groups = new Map<string, number[]>();
  requests.forEach((r, i) => {
    const key = `${r.tid}\u0000${r.number}`;
    const group = groups.get(key);
    if (group) group.push(i);
    else groups.set(key, [i]);
  });
  return [...groups.values()];
}

/** One caller's part of a wider call's answer; a call made for one range alone is returned as is. */
function sliceHistory(history: History, call: Range, range: Range): History {
  if (call.start === range.start && call.end === range.end) return history;
  return {
    ...history,
    requestedCount: range.end - range.start,
    messages: sliceFor(history.messages, call, range),
  };
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The bench scenarios: what each target (the simulator directly, the bare proxy, the gateway)
 * is sent, and what a correct answer looks like. Every virtual user has its own load-test
 * account, so no two connections ever share credentials.
 */
import type { Request } from 'autocannon';
import { benchAccountNumbers, benchCredentials } from '../support/bench-accounts.js';
import { basic } from './load.js';

/**
 * direct: the simulator itself; bare: bench/bare-proxy.ts; gateway: dist/main.js;
 * yoga: bench/yoga-floor.ts (a one-field yoga server, no upstream call; scenario a only).
 */
export type TargetKind = 'direct' | 'bare' | 'yoga' | 'gateway';
export type ScenarioId = 'a' | 'b' | 'c' | 'd';

export interface Scenario {
  readonly id: ScenarioId;
  readonly title: string;
  /** Requests virtual user `vu` sends to each target this scenario measures. */
  readonly targets: Partial<Record<TargetKind, (vu: number) => Request[]>>;
  /** Upstream calls one request should cause at the gateway, where the scenario counts them. */
  readonly expectedCalls?: number;
  /** Null when `body` (from target `kind`) is a correct, complete answer; else what is wrong. */
  check(kind: TargetKind, body: unknown): string | null;
}

const BIG_TID = 'TN-L-0001'; // 450 messages in every load-test account
const BIG_NUMBER = '15125550101';
const TOLLFREE_TID = 'TN-T-0001';

export const OWNED_QUERY = '{ ownedNumbers { tid number } }';

export const PAGE_QUERY = `query Page($tid: ID!, $start: Int!, $end: Int!) {
  number(tid: $tid) {
    tid number type webhook
    history(start: $start, end: $end) {
      tid number requestedCount totalCount createdAt mostRecentMessageId mostRecentAt optIn
      messages { id systemId sentAt tid phone direction body mms mediaUrl status { code text ok raw } }
    }
  }
}`;

export const FANOUT_QUERY = `query FanOut($start: Int!, $end: Int!) {
  ownedNumbers {
    tid
    history(start: $start, end: $end) {
      totalCount
      messages { id sentAt direction body status { code ok } }
    }
  }
}`;

/** Every number need there is, and two distinct histories asked for five times in all. */
export const DUPLICATES_QUERY = `query Duplicates($tid: ID!) {
  local: ownedNumbers(type: LOCAL) { tid number }
  tollfree: ownedNumbers(type: TOLLFREE) { tid number }
  all: ownedNumbers { tid number type }
  first: number(tid: $tid) { tid number }
  second: number(tid: "${TOLLFREE_TID}") { tid webhook history(start: 0, end: 5) { totalCount } }
  third: number(tid: "TN-L-0002") { tid type }
  again: number(tid: $tid) {
    page1: history(start: 0, end: 10) { totalCount messages { id body } }
    page2: history(start: 0, end: 10) { messages { id sentAt } }
  }
  more: number(tid: $tid) { history(start: 0, end: 10) { totalCount } }
  tollfreeAgain: number(tid: "${TOLLFREE_TID}") { history(start: 0, end: 5) { messages { id } } }
}`;

function graphql(query: string, variables?: Record<string, unknown>) {
  const body = JSON.stringify(variables ? { query, variables } : { query });
  return (vu: number): Request[] => {
    const { sysId, authToken } = benchCredentials(vu);
    return [
      {
        method: 'POST',
        path: '/graphql',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: basic(sysId, authToken),
        },
        body,
      },
    ];
  };
}

function bare(path: string, payload: unknown) {
  const body = JSON.stringify(payload);
  return (vu: number): Request[] => {
    const { sysId, authToken } = benchCredentials(vu);
    return [
      {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', authorization: basic(sysId, authToken) },
        body,
      },
    ];
  };
}

function direct(operation: string, params: Record<string, string>) {
  return (vu: number): Request[] => {
    const { sysId, authToken } = benchCredentials(vu);
    const form = new URLSearchParams({ sys_id: sysId, auth_token: authToken, ...params });
    return [
      {
        method: 'POST',
        path: `/api/${operation}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      },
    ];
  };
}

type Json = Record<string, unknown> | null | undefined;
const get = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v as Json)?.[k], value);
const length = (value: unknown): number => (Array.isArray(value) ? value.length : -1);

function graphqlErrors(body: unknown): string | null {
  const errors = get(body, 'errors');
  return errors === undefined ? null : `errors: ${JSON.stringify(errors).slice(0, 300)}`;
}

function expect(condition: boolean, what: string): string | null {
  return condition ? null : `expected ${what}`;
}

export function scenarios(options: { fanOutNumbers: number }): Record<ScenarioId, Scenario> {
  const fanOut = options.fanOutNumbers;
  // Some numbers hold fewer than five messages (one holds none): count what each page must hold.
  const fanOutMessages = benchAccountNumbers(fanOut).map((n) => Math.min(5, n.messages.length));
  return {
    a: {
      id: 'a',
      title: '(a) ownedNumbers { tid number }',
      targets: {
        direct: direct('allownednumbers', {}),
        bare: bare('/owned', {}),
        yoga: graphql('{ hello }'),
        gateway: graphql(OWNED_QUERY),
      },
      expectedCalls: 1,
      check(kind, body) {
        if (kind === 'direct') return expect(length(get(body, 'data')) === 7, '7 numbers');
        if (kind === 'yoga') return expect(get(body, 'data', 'hello') === 'hello', 'hello');
        return (
          graphqlErrors(body) ??
          expect(length(get(body, 'data', 'ownedNumbers')) === 7, '7 numbers')
        );
      },
    },
    b: {
      id: 'b',
      title: '(b) history page, 50 messages, every field',
      targets: {
        direct: direct('smshistory', {
          tid: BIG_TID,
          number: BIG_NUMBER,
          history_start: '0',
          history_end: '50',
        }),
        bare: bare('/pages', { pages: [{ tid: BIG_TID, start: 0, end: 50 }] }),
        gateway: graphql(PAGE_QUERY, { tid: BIG_TID, start: 0, end: 50 }),
      },
      expectedCalls: 2,
      check(kind, body) {
        if (kind === 'direct') return expect(length(get(body, 'messages')) === 50, '50 messages');
        const page =
          kind === 'bare'
            ? get((get(body, 'data', 'pages') as unknown[] | undefined)?.[0], 'history')
            : get(body, 'data', 'number', 'history');
        return graphqlErrors(body) ?? expect(length(get(page, 'messages')) === 50, '50 messages');
      },
    },
    c: {
      id: 'c',
      title: `(c) fan-out: ${fanOut} numbers x history(0, 5)`,
      targets: {
        bare: bare('/fanout', { start: 0, end: 5 }),
        gateway: graphql(FANOUT_QUERY, { start: 0, end: 5 }),
      },
      expectedCalls: 1 + fanOut,
      check(_kind, body) {
        const list = get(body, 'data', 'ownedNumbers');
        const pages = Array.isArray(list) ? list.map((n) => get(n, 'history', 'messages')) : [];
        return (
          graphqlErrors(body) ??
          expect(
            length(list) === fanOut && pages.every((m, i) => length(m) === fanOutMessages[i]),
            `${fanOut} numbers with their latest (up to 5) messages`,
          )
        );
      },
    },
    d: {
      id: 'd',
      title: '(d) duplicate-heavy query',
      targets: {
        bare: bare('/pages', {
          pages: [
            { tid: BIG_TID, start: 0, end: 10 },
            { tid: TOLLFREE_TID, start: 0, end: 5 },
          ],
        }),
        gateway: graphql(DUPLICATES_QUERY, { tid: BIG_TID }),
      },
      // One call for every number need, one per distinct history (two).
      expectedCalls: 3,
      check(kind, body) {
        if (kind === 'bare') return expect(length(get(body, 'data', 'pages')) === 2, '2 pages');
        return (
          graphqlErrors(body) ??
          expect(
            length(get(body, 'data', 'all')) === 7 &&
              length(get(body, 'data', 'again', 'page2', 'messages')) === 10 &&
              length(get(body, 'data', 'tollfreeAgain', 'history', 'messages')) === 5,
            'every alias answered',
          )
        );
      },
    },
  };
}

/**
 * The floods of the pipeline issue ("one pipeline for every door, each request priced before it
 * runs"), run by bench/floods.ts like the others (`npm run soak -- --scenario=<flood>`):
 * - ws-subscribes: one verified account, one WebSocket, 5 `subscribe`s a second, each a query of
 *   600 `tid`s under `ownedNumbers` with a new operation name (no document cache helps);
 * - validation-fields, -inline, -typename, -fragments: 4 clients without credentials, each
 *   sending in a loop a document that cost 100-500 ms to validate, a new name each time: 600
 *   `tid`s; 30 inline fragments of 20; 700 `__typename`s at the root (answered with data, no
 *   credentials needed); 20 named fragments of 25 spread together;
 * - invalid-document: the same with the 600 `tid`s and one unknown field (validated twice before:
 *   the query lane handed it to yoga, which parsed and validated it again);
 * - burst-heavy: an account owning 200 numbers sends 8 copies at once of an accepted query (9
 *   aliases of every field of a number and 25 messages of its history, each about 950 ms of CPU
 *   and 7.8 MB of answer ending in RESPONSE_TOO_LARGE), then again once all 8 are answered;
 * - heavy-accounts: 16 clients looping `messages(first: 100)` with every field under
 *   `ownedNumbers`, each request from another of 200 accounts, so each account is within its share;
 * - deep-variables-cache: with the response cache on, 4 clients sending variables nested 5,000
 *   deep (a 10 kB body; they overflowed the cache key's writer: a 500 each).
 */
import { createClient, type Client } from 'graphql-ws';
import { request } from 'undici';
import WebSocket from 'ws';
import { benchCredentials } from '../support/bench-accounts.js';
import type { FloodPlan } from './floods.js';
import { basic } from './load.js';

export const PIPELINE_FLOODS = [
  'ws-subscribes',
  'validation-fields',
  'validation-inline',
  'validation-typename',
  'validation-fragments',
  'invalid-document',
  'burst-heavy',
  'heavy-accounts',
  'deep-variables-cache',
] as const;
type PipelineFlood = (typeof PIPELINE_FLOODS)[number];

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const times = (n: number, make: (i: number) => string): string =>
  Array.from({ length: n }, (_, i) => make(i)).join(' ');

/** The flooding account (the bystander is account 0). */
const FLOODER = benchCredentials(1);
const FLOODER_AUTH = basic(FLOODER.sysId, FLOODER.authToken);

/** The error codes of an answer, distinct and sorted ("data" when it has none). */
function codesOf(text: string): string {
  const codes = new Set([...text.matchAll(/"code":"([A-Z_]+)"/g)].map((m) => m[1] ?? ''));
  if (codes.size === 0) return text.includes('"errors"') ? 'error' : 'data';
  return [...codes].sort().join('+');
}

async function post(gatewayUrl: string, body: string, authorization?: string): Promise<string> {
  const response = await request(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(authorization ? { authorization } : {}),
    },
    body,
  });
  return `HTTP ${response.statusCode} ${codesOf(await response.body.text())}`;
}

// ------------------------------------------------------------------ the costly documents

const SHAPES = {
  fields: (n: number) => `query Q${n} { ownedNumbers { ${times(600, () => 'tid')} } }`,
  inline: (n: number) =>
    `query Q${n} { ownedNumbers { ${times(30, () => `... on Number { ${times(20, () => 'tid')} }`)} } }`,
  typename: (n: number) => `query Q${n} { ${times(700, () => '__typename')} }`,
  fragments: (n: number) =>
    `query Q${n} { ownedNumbers { ${times(20, (i) => `...F${i}`)} } } ` +
    times(20, (i) => `fragment F${i} on Number { ${times(25, () => 'tid')} }`),
  invalid: (n: number) => `query Q${n} { ownedNumbers { ${times(600, () => 'tid')} nope } }`,
};

/** 4 clients without credentials, each a new document of `shape` at a time. */
function validationFlood(shape: keyof typeof SHAPES): FloodPlan {
  return {
    env: {},
    workers: 4,
    worker: ({ gatewayUrl, next }) =>
      post(gatewayUrl, JSON.stringify({ query: SHAPES[shape](next()) })),
  };
}

// ------------------------------------------------------------------------ ws-subscribes

/** The flood's one connection, opened on first use. */
let socketClient: Client | null = null;

const wsSubscribes: FloodPlan = {
  env: {},
  workers: 1,
  async worker({ gatewayUrl, next }) {
    socketClient ??= createClient({
      url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: FLOODER_AUTH },
      lazyCloseTimeout: 60_000,
      retryAttempts: 0,
    });
    const client = socketClient;
    const started = performance.now();
    const outcome = await new Promise<string>((resolve) => {
      let last = 'no result';
      client.subscribe(
        { query: SHAPES.fields(next()) },
        {
          next: (value) => void (last = codesOf(JSON.stringify(value))),
          error: (error) =>
            resolve(
              `error ${Array.isArray(error) ? codesOf(JSON.stringify(error)) : String(error).slice(0, 40)}`,
            ),
          complete: () => resolve(last),
        },
      );
    });
    // Five a second, as in the issue.
    await sleep(200 - (performance.now() - started));
    return `ws ${outcome}`;
  },
};

// -------------------------------------------------------------------------- burst-heavy

const EVERY_MESSAGE_FIELD =
  'id systemId sentAt tid phone direction body mms mediaUrl status { code text ok }';
const HEAVY_QUERY = `{ ${times(
  9,
  (i) =>
    `a${i}: ownedNumbers { tid number history(start: 0, end: 25) { totalCount messages { ${EVERY_MESSAGE_FIELD} } } }`,
)} }`;

const burstHeavy: FloodPlan = {
  env: {},
  simulatorEnv: { BENCH_SIM_NUMBERS: '200' },
  workers: 1,
  async worker({ gatewayUrl }) {
    const body = JSON.stringify({ query: HEAVY_QUERY });
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => post(gatewayUrl, body, FLOODER_AUTH)),
    );
    return `8 at once: ${[...new Set(outcomes)].sort().join(', ')}`;
  },
};

// ----------------------------------------------------------------------- heavy-accounts

const HEAVY_ACCOUNTS = 200;
const PAGE_QUERY = `{ ownedNumbers { messages(first: 100) { edges { cursor node { ${EVERY_MESSAGE_FIELD} } } } } }`;

const heavyAccounts: FloodPlan = {
  env: {},
  // Accounts 1 to 200 flood; 0 is the bystander's.
  simulatorEnv: { BENCH_SIM_ACCOUNTS: String(HEAVY_ACCOUNTS + 1) },
  workers: 16,
  async worker({ gatewayUrl, next }) {
    const { sysId, authToken } = benchCredentials(1 + (next() % HEAVY_ACCOUNTS));
    return post(gatewayUrl, JSON.stringify({ query: PAGE_QUERY }), basic(sysId, authToken));
  },
};

// ----------------------------------------------------------------- deep-variables-cache

/** Written by hand: JSON.stringify overflows the stack at this depth too. */
function deepVariablesBody(depth: number): string {
  let deep = '"x"';
  for (let i = 0; i < depth; i += 1) deep = i % 2 ? `[${deep}]` : `{"a":${deep}}`;
  const query = JSON.stringify('query($tid: ID!) { number(tid: $tid) { tid } }');
  return `{"query":${query},"variables":{"tid":${deep}}}`;
}
const DEEP_BODY = deepVariablesBody(5_000);

const deepVariablesCache: FloodPlan = {
  env: { CACHE_TTL_MS: '60000' },
  workers: 4,
  async worker({ gatewayUrl }) {
    const outcome = await post(gatewayUrl, DEEP_BODY, FLOODER_AUTH);
    return outcome;
  },
  async after(_context, outcomes) {
    const failures = Object.keys(outcomes)
      .filter((outcome) => outcome.startsWith('HTTP 5'))
      .map((outcome) => `answered ${outcome}, not a clear 400`);
    return { notes: [`the body: ${DEEP_BODY.length} bytes, variables 5,000 deep`], failures };
  },
};

export const PIPELINE_PLANS: Record<PipelineFlood, FloodPlan> = {
  'ws-subscribes': wsSubscribes,
  'validation-fields': validationFlood('fields'),
  'validation-inline': validationFlood('inline'),
  'validation-typename': validationFlood('typename'),
  'validation-fragments': validationFlood('fragments'),
  'invalid-document': validationFlood('invalid'),
  'burst-heavy': burstHeavy,
  'heavy-accounts': heavyAccounts,
  'deep-variables-cache': deepVariablesCache,
};

/**
 * docs/errors.md's table is the one list a client reads: every code of `ErrorCode`
 * (src/core/errors.ts) has a row and every row is a code; each row's two HTTP statuses are
 * measured here by making the gateway produce that code, once with
 * `Accept: application/json` and once with `Accept: application/graphql-response+json`; the codes
 * a live stream carries (RESYNC_REQUIRED, SLOW_CONSUMER) are produced in a real SSE stream too;
 * every `extensions` field measured is named in its row; every `argumentName` the page lists is
 * measured and every one measured is listed; and no file of `src/` writes a code as a string
 * literal instead of naming it in `ErrorCode`.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, ErrorCode } from '../../src/core/errors.js';
import { createCursorCodec } from '../../src/graph/cursors.js';
import { allowListPlugin, readPersistedOperations } from '../../src/http/plugins/allow-list.js';
import {
  DEMO_CREDENTIALS,
  startSimulator,
  type RunningSimulator,
} from '../../src/simulator/index.js';
import {
  basicAuth,
  createTestGateway,
  type TestGateway,
  type TestGatewayOptions,
} from '../fixtures/harness.js';
import { liveStacks, type LiveStack } from '../fixtures/live-stack.js';
import { firstReads, POLL_PAGE, polled } from '../fixtures/live-reads.js';
import { startScriptedUpstream, type Script } from '../../support/scripted-upstream.js';

const root = new URL('../../', import.meta.url);
const auth = basicAuth(DEMO_CREDENTIALS);
const JSON_ACCEPT = 'application/json';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const ACCEPTS = [JSON_ACCEPT, GRAPHQL_RESPONSE] as const;
type Accept = (typeof ACCEPTS)[number];

interface Row {
  readonly code: string;
  /** The status cell for each Accept, as written (e.g. `200`, `400`). */
  readonly status: Record<Accept, string>;
  readonly extensions: string;
}

/** The rows of the table under "## Every code": | `CODE` | json | graphql-response+json | … */
async function readTable(): Promise<Row[]> {
  const text = await readFile(new URL('docs/errors.md', root), 'utf8');
  const section = text.split('## Every code')[1]?.split('\n## ')[0] ?? '';
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const code = /^`([A-Z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!code) continue;
    rows.push({
      code,
      status: { [JSON_ACCEPT]: cells[2] ?? '', [GRAPHQL_RESPONSE]: cells[3] ?? '' },
      extensions: cells[5] ?? '',
    });
  }
  return rows;
}

describe('docs/errors.md and ErrorCode', () => {
  it('has one row per code, and no row that is not a code', async () => {
    const rows = await readTable();
    expect(rows.map((r) => r.code).sort()).toEqual([...ERROR_CODES].sort());
  });

  it('finds no code written as a string literal in src/ outside src/core/errors.ts', async () => {
    const files = (await readdir(new URL('src/', root), { recursive: true })).filter((f) =>
      f.endsWith('.ts'),
    );
    expect(files.length).toBeGreaterThan(20);
    const offences: string[] = [];
    for (const file of files) {
      if (file === join('core', 'errors.ts')) continue;
      const source = await readFile(new URL(`src/${file}`, root), 'utf8');
      for (const code of ERROR_CODES) {
        if (source.includes(`'${code}'`) || source.includes(`"${code}"`)) {
          offences.push(`${file}: '${code}'`);
        }
      }
      // A code-shaped literal next to `code:` that the list does not know is a new code.
      for (const match of source.matchAll(/\bcode:\s*['"]([A-Z][A-Z_]{3,})['"]/g)) {
        offences.push(`${file}: code '${match[1]}'`);
      }
    }
    expect(offences).toEqual([]);
  });
});

/** How one code is produced: a request against a gateway set up for it. */
interface Scenario {
  readonly gateway?: (upstreamUrl: string) => TestGatewayOptions;
  /** A scripted upstream instead of the simulator. */
  readonly upstream?: Script;
  /** Requests made first (e.g. the one that opens the breaker); their answers are ignored. */
  readonly before?: number;
  readonly request: (accept: Accept) => Request;
  /** BAD_USER_INPUT: the `extensions.argumentName` it must come with. */
  readonly argumentName?: string;
}

const URL_ = 'http://gateway.test/graphql';
function post(body: unknown, accept: Accept, headers: Record<string, string> = auth): Request {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Request(URL_, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...headers },
    body: text,
  });
}
const query = (q: string, headers?: Record<string, string>) => (accept: Accept) =>
  post({ query: q }, accept, headers);

const HISTORY = '{ number(tid: "TN-L-0001") { tid history(start: 0, end: 3) { totalCount } } }';
const fails500: Script = () => ({ status: 500, text: 'down' });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let allowListDir: string;
function allowList(): Plugin {
  const path = join(allowListDir, 'allow.json');
  return allowListPlugin(readPersistedOperations(path));
}

/** A stand-in for a bug: a plain Error thrown while executing, which the gateway must mask. */
const throwsUnexpectedly: Plugin = {
  onExecute() {
    throw new Error('a bug with a secret in its message');
  },
};

/** The same in one field's resolver: the request's upstream access throws a plain Error. */
const oneFieldThrows: Plugin = {
  onExecute({ args }) {
    const context = args.contextValue as unknown as { upstream: () => never };
    context.upstream = () => {
      throw new Error('a bug with a secret in its message');
    };
  },
};

const LIMITED: Partial<TestGatewayOptions['limits']> = {
  maxTokens: 40,
  maxAliases: 1,
  maxDepth: 3,
  maxDirectives: 1,
  maxCost: 2,
};
const limited = () => ({ limits: LIMITED });

/** A well-formed cursor (and so resume token) signed with a key no test gateway has. */
const FOREIGN_CURSOR = createCursorCodec('another-gateway-key-'.repeat(2)).encode({
  tid: 'TN-L-0001',
  id: 'm-1',
  offset: 0,
  total: 1,
});

/** One or more ways to produce each code; a code only a live stream carries is in STREAMS. */
const SCENARIOS: Record<ErrorCode, Record<string, Scenario> | 'stream'> = {
  UNAUTHENTICATED: { 'no credentials': { request: query('{ ownedNumbers { tid } }', {}) } },
  BAD_USER_INPUT: {
    'start below 0': {
      argumentName: 'start',
      request: query('{ number(tid: "TN-L-0001") { history(start: -1, end: 1) { totalCount } } }'),
    },
    'reversed range': {
      argumentName: 'end',
      request: query('{ number(tid: "TN-L-0001") { history(start: 3, end: 1) { totalCount } } }'),
    },
    'range wider than MAX_HISTORY_RANGE': {
      argumentName: 'end',
      request: query(
        '{ number(tid: "TN-L-0001") { history(start: 0, end: 5000) { totalCount } } }',
      ),
    },
    'first below 0': {
      argumentName: 'first',
      request: query('{ number(tid: "TN-L-0001") { messages(first: -1) { totalCount } } }'),
    },
    'last over the maximum': {
      argumentName: 'last',
      request: query('{ number(tid: "TN-L-0001") { messages(last: 101) { totalCount } } }'),
    },
    'invented cursor': {
      argumentName: 'after',
      request: query(
        '{ number(tid: "TN-L-0001") { messages(first: 2, after: "x") { totalCount } } }',
      ),
    },
    'before with first': {
      argumentName: 'before',
      request: query(
        '{ number(tid: "TN-L-0001") { messages(first: 2, before: "x") { totalCount } } }',
      ),
    },
    'invented node id': { argumentName: 'id', request: query('{ node(id: "x") { id } }') },
    'nodes over maxNodeIds': {
      argumentName: 'ids',
      gateway: () => ({ limits: { maxNodeIds: 1 } }),
      request: query('{ nodes(ids: ["a", "b"]) { id } }'),
    },
    '_entities over maxNodeIds': {
      argumentName: 'representations',
      gateway: () => ({ limits: { maxNodeIds: 1 } }),
      request: query(
        '{ _entities(representations: [{ __typename: "Number", tid: "a" }, { __typename: "Number", tid: "b" }]) { __typename } }',
      ),
    },
    'unknown tid': {
      argumentName: 'tids',
      gateway: () => ({ live: { pollMs: 60_000 } }),
      request: query('subscription { messageAdded(tids: ["TN-NOPE"]) { id } }'),
    },
    'tids: []': {
      argumentName: 'tids',
      gateway: () => ({ live: { pollMs: 60_000 } }),
      request: query('subscription { messageEdgeAdded(tids: []) { resumeToken } }'),
    },
    'invented resume token': {
      argumentName: 'resumeToken',
      gateway: () => ({ live: { pollMs: 60_000 } }),
      request: query('subscription { messageAdded(tids: ["TN-L-0001"], resumeToken: "x") { id } }'),
    },
  },
  UPSTREAM_TIMEOUT: {
    hang: {
      upstream: () => ({ hang: true }),
      gateway: () => ({ timeoutMs: 100 }),
      request: query('{ ownedNumbers { tid } }'),
    },
  },
  UPSTREAM_ERROR: {
    'HTTP 500': { upstream: fails500, request: query('{ ownedNumbers { tid } }') },
  },
  UPSTREAM_UNAVAILABLE: {
    'breaker open': {
      upstream: fails500,
      gateway: () => ({ resilience: { breakerThreshold: 1, breakerCooldownMs: 60_000 } }),
      before: 1,
      request: query('{ ownedNumbers { tid } }'),
    },
  },
  RESPONSE_TOO_LARGE: {
    'MAX_RESPONSE_BYTES 1024': {
      gateway: () => ({ limits: { maxResponseBytes: 1024 } }),
      request: query(
        '{ number(tid: "TN-L-0001") { history(start: 0, end: 20) { messages { body } } } }',
      ),
    },
  },
  UPSTREAM_CALL_LIMIT: {
    'maxUpstreamCalls 1': {
      gateway: () => ({ limits: { maxUpstreamCalls: 1 } }),
      request: query('{ ownedNumbers { tid history(start: 0, end: 1) { totalCount } } }'),
    },
  },
  RATE_LIMITED: {
    'HTTP 429': {
      upstream: () => ({ status: 429, text: 'slow down', headers: { 'retry-after': '4' } }),
      request: query('{ ownedNumbers { tid } }'),
    },
  },
  LIVE_UPDATES_OFF: {
    'LIVE_POLL_MS=0': { request: query('subscription { messageAdded { id } }') },
  },
  SUBSCRIPTION_LIMIT: {
    'per account': {
      gateway: () => ({ live: { pollMs: 60_000, maxPerAccount: 0 } }),
      request: query('subscription { messageAdded { id } }'),
    },
  },
  RESYNC_REQUIRED: {
    'cursor of an unknown key': {
      request: query(
        `{ number(tid: "TN-L-0001") { messages(first: 2, after: "${FOREIGN_CURSOR}") { totalCount } } }`,
      ),
    },
    'resume token of an unknown key': {
      gateway: () => ({ live: { pollMs: 60_000 } }),
      request: query(
        `subscription { messageAdded(tids: ["TN-L-0001"], resumeToken: "${FOREIGN_CURSOR}") { id } }`,
      ),
    },
  },
  SLOW_CONSUMER: 'stream',
  PERSISTED_QUERY_REQUIRED: {
    'allow-list, query text': {
      gateway: () => ({ persistedOperations: allowList() }),
      request: query(HISTORY),
    },
  },
  PERSISTED_QUERY_NOT_FOUND: {
    'APQ, unknown hash': {
      request: (accept) =>
        post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256('no') } } }, accept),
    },
    'allow-list, unknown hash': {
      gateway: () => ({ persistedOperations: allowList() }),
      request: (accept) =>
        post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256('no') } } }, accept),
    },
  },
  PERSISTED_QUERY_MISMATCH: {
    'APQ, wrong hash': {
      request: (accept) =>
        post(
          {
            query: HISTORY,
            extensions: { persistedQuery: { version: 1, sha256Hash: sha256('x') } },
          },
          accept,
        ),
    },
  },
  REQUEST_ENTITY_TOO_LARGE: {
    MAX_BODY_BYTES: {
      request: (accept) =>
        post({ query: `{ ownedNumbers { tid } }${' '.repeat(200_000)}` }, accept),
    },
  },
  BAD_REQUEST: {
    'not JSON': { request: (accept) => post('{"query": ', accept) },
    'no query': { request: (accept) => post({ variables: {} }, accept) },
  },
  GRAPHQL_PARSE_FAILED: { syntax: { request: query('{ ownedNumbers { tid }') } },
  GRAPHQL_VALIDATION_FAILED: {
    'unknown field': { request: query('{ ownedNumbers { nope } }') },
    mutation: { request: query('mutation { __typename }') },
    maxTokens: {
      gateway: limited,
      request: query(`{ ownedNumbers { ${'tid '.repeat(50)} } }`),
    },
    maxAliases: {
      gateway: limited,
      request: query('{ a: ownedNumbers { tid } b: ownedNumbers { tid } }'),
    },
    maxDepth: {
      gateway: limited,
      request: query(
        '{ number(tid: "T") { history(start: 0, end: 1) { messages { status { code } } } } }',
      ),
    },
    maxDirectives: {
      gateway: limited,
      request: query('{ ownedNumbers @skip(if: false) { tid @include(if: true) } }'),
    },
    maxCost: {
      gateway: limited,
      request: query(
        '{ a: node(id: "x") { id } b: node(id: "y") { id } number(tid: "T") { tid } }',
      ),
    },
  },
  INTERNAL_SERVER_ERROR: {
    'one field': {
      gateway: () => ({ persistedOperations: oneFieldThrows }),
      request: query('{ ownedNumbers { tid } }'),
    },
    'whole request': {
      gateway: () => ({ persistedOperations: throwsUnexpectedly }),
      request: query('{ ownedNumbers { tid } }'),
    },
  },
};

let simulator: RunningSimulator;
let table: Map<string, Row>;
beforeAll(async () => {
  simulator = await startSimulator();
  allowListDir = await mkdtemp(join(tmpdir(), 'errors-table-'));
  await writeFile(join(allowListDir, 'allow.json'), JSON.stringify({ [sha256(HISTORY)]: HISTORY }));
  table = new Map((await readTable()).map((row) => [row.code, row]));
});
afterAll(async () => {
  await simulator?.close();
  if (allowListDir) await rm(allowListDir, { recursive: true, force: true });
});

interface Measured {
  readonly status: number;
  readonly codes: string[];
  readonly extensions: Record<string, unknown>[];
}

async function measure(scenario: Scenario, accept: Accept): Promise<Measured> {
  const scripted = scenario.upstream ? await startScriptedUpstream(scenario.upstream) : null;
  const url = scripted?.url ?? simulator.url;
  let test: TestGateway | undefined;
  try {
    test = createTestGateway(url, scenario.gateway?.(url) ?? {});
    for (let i = 0; i < (scenario.before ?? 0); i++) {
      await (await test.gateway.fetch(scenario.request(accept))).text();
    }
    const response = await test.gateway.fetch(scenario.request(accept));
    const body = (await response.json()) as { errors?: { extensions?: Record<string, unknown> }[] };
    const extensions = (body.errors ?? []).map((e) => e.extensions ?? {});
    return { status: response.status, codes: extensions.map((e) => String(e.code)), extensions };
  } finally {
    await test?.close();
    await scripted?.close();
  }
}

/**
 * The codes only a live stream carries, each produced in a real SSE stream against a growing
 * upstream (the live stack test/live/resume.test.ts uses too): a resume token further behind
 * than the resume bound, and a reader that stops reading while messages keep arriving.
 */
const LIVE_POLL_MS = 50;
const LIVE_HEADERS = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ADDED = 'subscription($t: String) { messageAdded(tids: ["T-A"], resumeToken: $t) { id } }';
type StreamCode = typeof ErrorCode.ResyncRequired | typeof ErrorCode.SlowConsumer;

const liveStack = liveStacks();

async function inLiveStack(
  tuning: { resumeLimit?: number; queueLimit?: number },
  run: (s: LiveStack) => Promise<Response>,
): Promise<Measured> {
  const s = await liveStack.start(
    { 'AC-1': ['T-A'] },
    { live: { pollMs: LIVE_POLL_MS, pageSize: POLL_PAGE, ...tuning } },
  );
  const response = await run(s);
  // The stream ends after the error: its last event is what the table describes.
  const payloads = (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map(
      (line) =>
        JSON.parse(line.slice(6)) as { errors?: { extensions?: Record<string, unknown> }[] },
    );
  const extensions = (payloads.at(-1)?.errors ?? []).map((e) => e.extensions ?? {});
  return { status: response.status, codes: extensions.map((e) => String(e.code)), extensions };
}

const sseRequest = (variables: Record<string, unknown> = {}) =>
  new Request(URL_, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...LIVE_HEADERS },
    body: JSON.stringify({ query: ADDED, variables }),
  });

const STREAMS: Record<StreamCode, () => Promise<Measured>> = {
  RESYNC_REQUIRED: () =>
    inLiveStack({ resumeLimit: 5 }, async (s) => {
      const first = await s.open(ADDED, LIVE_HEADERS);
      // Its head read, then a whole poll: the message added next is news to it.
      await firstReads(s.upstream, 1);
      await polled(s.upstream);
      s.upstream.add('T-A', 1);
      await first.waitFor(1);
      first.close();
      s.upstream.add('T-A', 6); // one more than the resume bound
      return s.gateway.fetch(sseRequest({ t: first.ids[0] }));
    }),
  SLOW_CONSUMER: () =>
    inLiveStack({ queueLimit: 5 }, async (s) => {
      // Not read until the gateway ends it: a reader that has stopped reading.
      const stuck = await s.gateway.fetch(sseRequest());
      await firstReads(s.upstream, 1);
      await polled(s.upstream);
      // Five at a time, each batch taken by a poll, until the gateway ends the reader (then
      // nothing polls any more).
      const ended = () => s.hub.stats.subscriptions === 0;
      for (let i = 0; i < 6 && !ended(); i += 1) {
        s.upstream.add('T-A', 5);
        await polled(s.upstream, ended);
      }
      return stuck;
    }),
};

/**
 * Every extensions field measured with `code` is named in its row; with `complete` (all the ways
 * of producing it measured), every field the row names was measured too.
 */
function expectRowExtensions(
  code: string,
  measured: readonly Measured[],
  label: string,
  complete = false,
) {
  const row = table.get(code);
  const seen = new Set<string>();
  for (const ext of measured.flatMap((m) => m.extensions.filter((e) => e.code === code))) {
    for (const key of Object.keys(ext).filter((k) => k !== 'code')) {
      seen.add(key);
      expect(row?.extensions, `${code} (${label}) comes with extensions.${key}`).toContain(
        `\`${key}\``,
      );
    }
  }
  if (!complete) return;
  const named = [...(row?.extensions ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1]);
  expect(
    named.filter((key) => !seen.has(key!)),
    `${code}: named in its row, never measured`,
  ).toEqual([]);
}

describe.each(Object.entries(SCENARIOS))('%s', (code, scenarios) => {
  if (code in STREAMS) {
    it('ends a live SSE stream (HTTP 200) as its last event, which its row says', async () => {
      const row = table.get(code);
      expect(row?.status[JSON_ACCEPT]).toMatch(/stream/);
      expect(row?.status[GRAPHQL_RESPONSE]).toMatch(/stream/);
      const measured = await STREAMS[code as StreamCode]();
      expect(measured.status).toBe(200);
      expect(measured.codes).toEqual([code]);
      expectRowExtensions(code, [measured], 'stream', scenarios === 'stream');
    });
  }
  if (scenarios === 'stream') return;
  it.each(ACCEPTS)('answers with the statuses its row gives, with Accept: %s', async (accept) => {
    const row = table.get(code);
    const statuses = new Set<number>();
    const all: Measured[] = [];
    for (const [label, scenario] of Object.entries(scenarios)) {
      const measured = await measure(scenario, accept);
      expect(measured.codes, label).toContain(code);
      statuses.add(measured.status);
      all.push(measured);
      expectRowExtensions(code, [measured], label);
      if (code === ErrorCode.BadUserInput) {
        const ext = measured.extensions.find((e) => e.code === code);
        expect(ext?.argumentName, label).toBe(scenario.argumentName);
      }
    }
    expectRowExtensions(code, all, 'all scenarios', true);
    const documented = new Set((row?.status[accept] ?? '').match(/\d{3}/g)?.map(Number) ?? []);
    expect([...statuses].sort()).toEqual([...documented].sort());
  });
});

describe('extensions.argumentName', () => {
  it('the page lists every argument a BAD_USER_INPUT scenario above names, and no other', async () => {
    const text = await readFile(new URL('docs/errors.md', root), 'utf8');
    const sentence =
      /`extensions\.argumentName` \(with `BAD_USER_INPUT`\) names the argument refused: ([^.(]+)/.exec(
        text,
      )?.[1];
    const listed = [...(sentence ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1]);
    const scenarios = Object.values(SCENARIOS.BAD_USER_INPUT as Record<string, Scenario>);
    // Each scenario's argumentName is checked against the gateway's answer above.
    expect(scenarios.every((scenario) => scenario.argumentName)).toBe(true);
    const measured = new Set(scenarios.map((scenario) => scenario.argumentName));
    expect([...listed].sort()).toEqual([...measured].sort());
  });
});

/**
 * The two attacks of issue 27 on a 200-number account: 29 aliases of `history(0, 1000)` under
 * `ownedNumbers`, and `nodes(ids:)` with one id 30 times around 29 such aliases. With the default
 * limits the cost estimate refuses both before any upstream call; with the estimate out of the
 * way, the byte ceiling stops the answer while it is built, and another account is served
 * meanwhile. The actual cost is recorded beside the estimate.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/config.js';
import { encodeGlobalId } from '../../src/graph/global-ids.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import { benchCredentials } from '../../support/bench-accounts.js';
import { basicAuth, createTestGateway, type TestGateway } from '../fixtures/harness.js';

const NUMBERS = 200;
const MESSAGE =
  'id systemId sentAt tid phone direction body mms mediaUrl status { code text ok raw }';
const aliases = (count: number) =>
  Array.from(
    { length: count },
    (_, i) => `h${i}: history(start: 0, end: 1000) { totalCount messages { ${MESSAGE} } }`,
  ).join(' ');
const FAN_OUT_ATTACK = `{ ownedNumbers { tid ${aliases(29)} } }`;
const NODE_ID = JSON.stringify(encodeGlobalId('Number', 'TN-L-0001'));
const NODES_ATTACK = `{ nodes(ids: [${Array(30).fill(NODE_ID).join(', ')}]) { id ... on Number { ${aliases(29)} } } }`;

let simulator: RecordingUpstream;
let defaults: TestGateway;
let uncosted: TestGateway;
beforeAll(async () => {
  simulator = await startRecordingUpstream({ benchAccounts: { count: 2, numbers: NUMBERS } });
  defaults = createTestGateway(simulator.url, { timeoutMs: 60_000 });
  // The estimate out of the way: only the byte ceiling stands.
  // Retries as in production: the loopback simulator shares this busy process, and a reset
  // connection is not what this test is about.
  uncosted = createTestGateway(simulator.url, {
    timeoutMs: 60_000,
    resilience: { retries: 2 },
    limits: { maxCost: 1_000_000_000 },
  });
});
afterAll(async () => {
  await defaults.close();
  await uncosted.close();
  await simulator.close();
});
beforeEach(() => simulator.resetCalls());

async function post(test: TestGateway, query: string, headers: Record<string, string>) {
  const response = await test.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  const text = await response.text();
  return {
    bytes: Buffer.byteLength(text),
    body: JSON.parse(text) as {
      data?: Record<string, unknown> | null;
      errors?: { message: string; extensions?: Record<string, unknown> }[];
    },
  };
}

const attacker = basicAuth(benchCredentials(0));
const bystander = basicAuth(benchCredentials(1));

/**
 * Sends the bystander's small query, one at a time, until `done()`; each is answered without
 * errors. Returns how many were answered before `done()` held.
 */
async function bystanderAnswersUntil(test: TestGateway, done: () => boolean): Promise<number> {
  let served = 0;
  while (!done()) {
    const { body } = await post(test, '{ ownedNumbers { tid } }', bystander);
    expect(body.errors).toBeUndefined();
    if (!done()) served += 1;
  }
  return served;
}

describe('the cost estimate', () => {
  it.each([
    ['29 history aliases under ownedNumbers', FAN_OUT_ATTACK, 11_606_000],
    ['nodes with one id 30 times', NODES_ATTACK, 1_740_900],
  ])('refuses %s before any upstream call', async (_, query, items) => {
    const { bytes, body } = await post(defaults, query, attacker);
    expect(body.data ?? null).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    // Each message counts 2 items: itself and its status object.
    expect(body.errors?.[0]?.message).toContain(
      `Query cost limit of ${DEFAULT_LIMITS.maxCost} exceeded: this operation may return or fetch ${items} items`,
    );
    expect(bytes).toBeLessThan(2_000);
    expect(simulator.calls).toEqual([]);
  });
});

describe('the response byte ceiling', () => {
  it.each([
    ['nodes with one id 30 times', NODES_ATTACK],
    ['29 history aliases under ownedNumbers', FAN_OUT_ATTACK],
  ])(
    'stops %s with RESPONSE_TOO_LARGE under MAX_RESPONSE_BYTES, serving another account meanwhile',
    async (_, query) => {
      let finished = false;
      const attack = post(uncosted, query, attacker).finally(() => {
        finished = true;
      });
      const servedDuring = await bystanderAnswersUntil(uncosted, () => finished);
      const { bytes, body } = await attack;
      expect(bytes).toBeLessThanOrEqual(DEFAULT_LIMITS.maxResponseBytes);
      const tooLarge = (body.errors ?? []).filter(
        (e) => e.extensions?.code === 'RESPONSE_TOO_LARGE',
      );
      // One error stands for every list left out.
      expect(tooLarge).toHaveLength(1);
      expect(tooLarge[0]?.message).toMatch(
        /^The answer would pass 8388608 bytes \(MAX_RESPONSE_BYTES\)/,
      );
      expect(tooLarge[0]?.extensions?.fieldsLeftOut).toBeGreaterThan(100);
      // What fitted is answered.
      expect(JSON.stringify(body.data)).toContain('"messages":[{');
      // The other account was answered while the attack ran, not after it.
      expect(servedDuring).toBeGreaterThan(0);
    },
    120_000,
  );
});

/**
 * What the cost limit admits (98,200 of 100,000 items): 14 aliases of a 34-message history on
 * 200 numbers, as bench/attack-floods.ts floods it. Its 200 history calls resolve together, and
 * the lists then completed at once held the loop for 300 ms per request. They are paced now
 * (src/graph/loop-pacing.ts): another account is answered between the attack's last upstream
 * call and its answer. Counted in requests, not milliseconds.
 */
describe('an admitted aliased history query', () => {
  const HALF_ATTACK = `{ ownedNumbers { ${Array.from(
    { length: 14 },
    (_, i) => `h${i}: history(start: 0, end: 34) { messages { id body } }`,
  ).join(' ')} } }`;
  const attackerCalls = () =>
    simulator.calls.filter((c) => c.accountSysId === benchCredentials(0).sysId).length;

  it('leaves the loop to another account while its answer is completed', async () => {
    let finished = false;
    const attack = post(defaults, HALF_ATTACK, attacker).finally(() => {
      finished = true;
    });
    // The number list and one history call per number: from the last one on, the gateway only
    // completes and writes the answer.
    while (!finished && attackerCalls() < 1 + NUMBERS) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const servedAfterLastCall = await bystanderAnswersUntil(defaults, () => finished);
    const { bytes, body } = await attack;
    expect(attackerCalls()).toBe(1 + NUMBERS);
    // The attacker's answer: what fitted, and one error for the 2,107 lists left out.
    expect(bytes).toBeLessThanOrEqual(DEFAULT_LIMITS.maxResponseBytes);
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]?.extensions?.code).toBe('RESPONSE_TOO_LARGE');
    expect(body.errors?.[0]?.extensions?.fieldsLeftOut).toBeGreaterThan(1_000);
    // Completed in one run of the loop, the answer let at most the request already under way
    // through; paced, several.
    expect(servedAfterLastCall).toBeGreaterThanOrEqual(3);
  }, 60_000);
});

describe('the cost metrics', () => {
  it('records the estimate and the actual cost, in items', async () => {
    const demo = createTestGateway(simulator.url, { metrics: createMetrics() });
    try {
      const auth = basicAuth(DEMO_CREDENTIALS);
      const query =
        '{ number(tid: "TN-L-0001") { tid history(start: 0, end: 5) { messages { id } } } }';
      expect((await post(demo, query, auth)).body.errors).toBeUndefined();
      expect((await post(demo, '{ ownedNumbers { tid } }', auth)).body.errors).toBeUndefined();
      const metrics = await (await demo.gateway.fetch('http://gateway.test/metrics')).text();
      const value = (name: string) =>
        Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
      expect(value('graphql_operation_cost_estimated_count')).toBe(2);
      // 1 number + 1 history + 5 messages; then ownedNumbers at its assumed 200.
      expect(value('graphql_operation_cost_estimated_sum')).toBe(7 + 200);
      expect(value('graphql_operation_cost_actual_count')).toBe(2);
      // The demo account owns 7 numbers.
      expect(value('graphql_operation_cost_actual_sum')).toBe(7 + 7);
    } finally {
      await demo.close();
    }
  });
});

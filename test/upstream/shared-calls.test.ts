/** Identical calls in flight at once are made once across requests, and only for the same pair. */
import { describe, expect, it } from 'vitest';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  SECOND_DEMO_CREDENTIALS,
} from '../../src/simulator/index.js';
import { basicAuth, execute, sharedStack } from '../fixtures/harness.js';
import { EveryHistoryQuery, OwnedNumbersQuery } from '../fixtures/operations.js';
import { JOIN_WINDOW_MS } from '../../src/upstream/shared-calls.js';

const LATENCY_MS = 200;
const stack = sharedStack({ latencyMs: LATENCY_MS }, {}, { resetCalls: true });
const operations = () => stack.simulator.calls.map((c) => c.operation);

describe('identical calls in flight', () => {
  it('are sent once when several requests of one pair ask at the same moment', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        execute(
          stack.gateway,
          EveryHistoryQuery,
          { start: 0, end: 3 },
          basicAuth(DEMO_CREDENTIALS),
        ),
      ),
    );
    for (const { body } of results) {
      expect(body.errors).toBeUndefined();
      expect(body.data?.ownedNumbers).toHaveLength(DEMO_ACCOUNT.numbers.length);
    }
    // One list and one history per number, for the eight requests together.
    expect(operations().filter((o) => o === 'allownednumbers')).toHaveLength(1);
    expect(operations().filter((o) => o === 'smshistory')).toHaveLength(
      DEMO_ACCOUNT.numbers.length,
    );
  });

  it('are not shared between two accounts, nor with an invented token for the same sys_id', async () => {
    const invented = { ...DEMO_CREDENTIALS, authToken: 'invented-token' };
    const [real, other, impostor] = await Promise.all(
      [DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS, invented].map((credentials) =>
        execute(stack.gateway, OwnedNumbersQuery, {}, basicAuth(credentials)),
      ),
    );
    expect(real?.body.errors).toBeUndefined();
    expect(other?.body.errors).toBeUndefined();
    expect(real?.body.data?.ownedNumbers).not.toEqual(other?.body.data?.ownedNumbers);
    expect(impostor?.body.data?.ownedNumbers ?? null).toBeNull();
    expect(impostor?.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    // Three calls: each pair asked the service itself.
    expect(stack.simulator.calls.map((c) => c.accountSysId).sort()).toEqual(
      [DEMO_CREDENTIALS.sysId, SECOND_DEMO_CREDENTIALS.sysId, null].sort(),
    );
  });

  it(`are not joined when sent more than ${JOIN_WINDOW_MS} ms before the request arrived`, async () => {
    const auth = basicAuth(DEMO_CREDENTIALS);
    const first = execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    // The first call is on its way (the service answers in LATENCY_MS) when the second request
    // arrives, too long after it was sent to be joined.
    await new Promise((resolve) => setTimeout(resolve, JOIN_WINDOW_MS * 2));
    const second = execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    const [a, b] = await Promise.all([first, second]);
    expect(a.body.errors).toBeUndefined();
    expect(b.body.errors).toBeUndefined();
    expect(operations()).toEqual(['allownednumbers', 'allownednumbers']);
    // Sent within the window, they share one call (the first test: eight requests, one call).
  });

  it('are not kept: a request after the call settled asks again and sees what arrived since', async () => {
    const tid = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
    const first = await execute(
      stack.gateway,
      EveryHistoryQuery,
      { start: 0, end: 1 },
      basicAuth(DEMO_CREDENTIALS),
    );
    stack.simulator.deliver(DEMO_CREDENTIALS.sysId, tid, 'arrived between');
    const second = await execute(
      stack.gateway,
      EveryHistoryQuery,
      { start: 0, end: 1 },
      basicAuth(DEMO_CREDENTIALS),
    );
    const count = (body: typeof first.body) =>
      body.data?.ownedNumbers?.find((n) => n.tid === tid)?.history?.totalCount ?? -1;
    expect(count(first.body)).toBeGreaterThanOrEqual(0);
    expect(count(second.body)).toBe(count(first.body) + 1);
    expect(operations().filter((o) => o === 'allownednumbers')).toHaveLength(2);
  });
});

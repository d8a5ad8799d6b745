/**
 * A request's loaders (src/upstream/loaders.ts), at a real loopback upstream: the calls one
 * request may make are counted, and the fields past the budget fail alone.
 */
import { describe, expect, it } from 'vitest';
import { execute, type TestGatewayOptions } from '../fixtures/harness.js';
import { EveryHistoryQuery } from '../fixtures/operations.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';
import { accountScript, historyReply, ownedNumbersReply } from '../../support/scripted-upstream.js';

const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok' };
const stacks = scriptedStacks({ timeoutMs: 250 });
/** A gateway over an upstream whose behaviour the test switches with `setReply`. */
const switchable = (options?: TestGatewayOptions) =>
  stacks.start(accountScript(['T-A', 'T-B']), options);

describe('per-request call budget', () => {
  it('refuses calls beyond maxUpstreamCalls with UPSTREAM_CALL_LIMIT, keeping what fitted', async () => {
    const stack = await switchable({ limits: { maxUpstreamCalls: 3 } });
    stack.setReply((call) =>
      call.operation === 'smshistory'
        ? historyReply(call)
        : ownedNumbersReply(['A', 'B', 'C', 'D']),
    );
    const { body } = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    expect(stack.calls()).toBe(3);
    const histories = body.data?.ownedNumbers?.map((n) => n.history !== null);
    expect(histories).toEqual([true, true, false, false]);
    expect(body.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['ownedNumbers', 2, 'history'], 'UPSTREAM_CALL_LIMIT'],
      [['ownedNumbers', 3, 'history'], 'UPSTREAM_CALL_LIMIT'],
    ]);
  });
});

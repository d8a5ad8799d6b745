/**
 * The upstream client (src/upstream/client.ts): reading a 429's Retry-After, and how each upstream
 * failure (slow, hanging, reset, an HTTP status, a bad body) reaches the client as a coded error
 * with partial data kept, at a real loopback server, the same gateway answering normally once the
 * upstream is well again.
 */
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/upstream/client.js';
import { execute, type TestGatewayOptions } from '../fixtures/harness.js';
import { EveryHistoryQuery } from '../fixtures/operations.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';
import { accountScript, historyReply, ownedNumbersReply } from '../../support/scripted-upstream.js';
import type { ScriptedReply } from '../../support/scripted-upstream.js';

const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok' };
const TIDS = ['T-A', 'T-B'];
const healthy = accountScript(TIDS);
// A deadline no answer in these tests comes near, even on a busy machine: it is no test's claim
// (a healthy call has been seen to take over 250 ms with the CPU busy, and a retry is only made if
// it fits in what is left). The cases that wait for a deadline set their own, short ones.
const stacks = scriptedStacks({ timeoutMs: 10_000 });
/** A gateway over an upstream whose behaviour the test switches with `setReply`. */
const switchable = (options?: TestGatewayOptions) => stacks.start(healthy, options);

/** Fails T-B's history with `failure`; everything else answers normally. */
const historyOfBFails = (failure: ScriptedReply) =>
  accountScript(TIDS, (call) => (call.params.get('tid') === 'T-B' ? failure : healthy(call)));

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['Mon, 23 Nov 2026 10:00:30 GMT', 30_000],
    ['Mon, 23 Nov 2026 09:00:00 GMT', 0],
    ['soon', null],
    ['-5', null],
    ['', null],
    [undefined, null],
  ])('%s -> %s ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('each failure mode, then recovery on the same gateway', () => {
  it.each([
    ['slow (under the deadline)', { delayMs: 120, json: null }, null],
    ['hanging', { hang: true }, 'UPSTREAM_TIMEOUT'],
    ['HTTP 500', { status: 500, text: 'oops' }, 'UPSTREAM_ERROR'],
    ['HTTP 503', { status: 503, text: 'busy' }, 'UPSTREAM_ERROR'],
    [
      'an HTML error page',
      { status: 502, text: '<html><body>Bad Gateway</body></html>' },
      'UPSTREAM_ERROR',
    ],
    [
      'truncated JSON',
      { text: '{"success":"1","total_mess', contentType: 'application/json' },
      'UPSTREAM_ERROR',
    ],
    ['a connection reset', { reset: true }, 'UPSTREAM_ERROR'],
    ['a body cut off mid-transfer', { cutOff: true }, 'UPSTREAM_ERROR'],
    ['success "0"', { json: { success: '0' } }, 'UPSTREAM_ERROR'],
    ['HTTP 401', { status: 401, text: '' }, 'UNAUTHENTICATED'],
    ['HTTP 403', { status: 403, text: '' }, 'UNAUTHENTICATED'],
  ] as const)('%s', async (_name, failure, code) => {
    // A hang waits for the deadline: 1 s, still room for the healthy calls after it.
    const stack = await switchable('hang' in failure ? { timeoutMs: 1_000 } : {});
    // A slow answer is the normal history, only late.
    const reply: ScriptedReply =
      'json' in failure && failure.json === null
        ? {
            ...(historyReply({
              operation: 'smshistory',
              params: new URLSearchParams({ tid: 'T-B' }),
            }) as { json: unknown }),
            delayMs: failure.delayMs,
          }
        : failure;
    stack.setReply(historyOfBFails(reply));
    const faulty = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    expect(faulty.status).toBe(200);
    expect(faulty.body.data?.ownedNumbers?.[0]?.history?.messages).toHaveLength(1);
    if (code === null) {
      expect(faulty.body.errors).toBeUndefined();
      expect(faulty.body.data?.ownedNumbers?.[1]?.history?.messages).toHaveLength(1);
    } else {
      expect(faulty.body.data?.ownedNumbers?.[1]?.history).toBeNull();
      expect(faulty.body.errors).toMatchObject([
        { path: ['ownedNumbers', 1, 'history'], extensions: { code } },
      ]);
      expect(faulty.body.errors?.[0]?.message).toMatch(/^The SMS service/);
    }

    stack.setReply(healthy);
    const after = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    expect(after.body.errors).toBeUndefined();
    expect(after.body.data?.ownedNumbers?.map((n) => n.history?.messages.length)).toEqual([1, 1]);
  });

  it('integers sent as numeric strings succeed', async () => {
    const stack = await switchable();
    stack.setReply((call) => {
      if (call.operation !== 'smshistory') return ownedNumbersReply(TIDS);
      const { json } = historyReply(call) as { json: Record<string, unknown> };
      return {
        json: {
          ...json,
          'message_count_requested ': '1',
          total_message_count: '1',
          most_recent_msg_id: '5',
        },
      };
    });
    const { body } = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    expect(body.errors).toBeUndefined();
    expect(body.data?.ownedNumbers?.map((n) => n.history?.totalCount)).toEqual([1, 1]);
  });
});

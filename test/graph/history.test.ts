/**
 * A number's message history (src/graph/history.ts): the ranges Number.history refuses before any
 * call, and those it passes on unchanged; History.mostRecentSystemId over the simulator's demo
 * account.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, execute, executeText, sharedStack } from '../fixtures/harness.js';
import { HistoryRangeQuery } from '../fixtures/operations.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';
import { accountScript } from '../../support/scripted-upstream.js';

const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-S3CR3T' };
const TIDS = ['T-A', 'T-B', 'T-C'];
const stacks = scriptedStacks();
/** The simulator and a gateway over it, for the file. */
const demo = sharedStack();
const demoAuth = basicAuth(DEMO_CREDENTIALS);

describe('history range validation', () => {
  async function range(start: number, end: number) {
    const { gateway, upstream } = await stacks.start(accountScript(TIDS), {
      limits: { maxHistoryRange: 100 },
    });
    const result = await execute(gateway, HistoryRangeQuery, { tid: 'T-A', start, end }, auth);
    return { ...result, historyCalls: upstream.calls.filter((c) => c.operation === 'smshistory') };
  }

  it.each([
    [-1, 5, /start must be 0 or more/],
    [10, 9, /end \(9\) must not be less than start \(10\)/],
    [0, 101, /wider than the maximum of 100/],
  ])(
    'refuses start=%i end=%i with BAD_USER_INPUT and no history call',
    async (start, end, message) => {
      const { body, historyCalls } = await range(start, end);
      expect(body.data?.number).toEqual({ tid: 'T-A', history: null });
      expect(body.errors?.[0]).toMatchObject({
        path: ['number', 'history'],
        extensions: { code: 'BAD_USER_INPUT' },
      });
      expect(body.errors?.[0]?.message).toMatch(message);
      expect(historyCalls).toHaveLength(0);
    },
  );

  it('passes accepted bounds through to the upstream unchanged', async () => {
    const { body, historyCalls } = await range(7, 107);
    expect(body.errors).toBeUndefined();
    expect(
      historyCalls.map((c) => [c.params.get('history_start'), c.params.get('history_end')]),
    ).toEqual([['7', '107']]);
  });
});

describe('History.mostRecentSystemId', () => {
  it("is the newest message's systemId (the deprecated mostRecentMessageId says the same)", async () => {
    const { body } = await executeText<{
      ownedNumbers: {
        history: {
          mostRecentSystemId: string | null;
          mostRecentMessageId: string | null;
          messages: { id: string; systemId: string }[];
        } | null;
      }[];
    }>(
      demo.gateway,
      `{ ownedNumbers { history(start: 0, end: 3) {
          mostRecentSystemId mostRecentMessageId messages { id systemId } } } }`,
      {},
      demoAuth,
    );
    expect(body.errors).toBeUndefined();
    const histories = (body.data?.ownedNumbers ?? []).map((n) => n.history);
    const withMessages = histories.filter((h) => (h?.messages.length ?? 0) > 0);
    expect(withMessages.length).toBeGreaterThan(0);
    for (const h of withMessages) {
      expect(h?.mostRecentSystemId).toBe(h?.messages[0]?.systemId);
      expect(h?.mostRecentMessageId).toBe(h?.mostRecentSystemId);
      expect(h?.mostRecentSystemId).not.toBe(h?.messages[0]?.id);
    }
  });
});

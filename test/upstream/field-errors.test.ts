/** Upstream failures reach the client as coded field errors, with everything else intact. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/config.js';
import { createGateway } from '../../src/http/server.js';
import { execute, executeText } from '../fixtures/harness.js';
import { EveryHistoryQuery, OwnedNumbersQuery } from '../fixtures/operations.js';
import {
  accountScript,
  historyReply,
  startScriptedUpstream,
  type ScriptedReply,
} from '../../support/scripted-upstream.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';

const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-S3CR3T' };
const TIDS = ['T-A', 'T-B', 'T-C'];
const stacks = scriptedStacks();

/** A gateway over an upstream whose history for T-B answers `failure`; everything else succeeds. */
async function withFailingHistory(failure: ScriptedReply, timeoutMs = 2_000) {
  const { gateway } = await stacks.start(
    accountScript(TIDS, (call) =>
      call.params.get('tid') === 'T-B' ? failure : historyReply(call),
    ),
    { timeoutMs },
  );
  return execute(gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
}

describe('one number failing leaves the rest of the answer intact', () => {
  it.each([
    [
      'HTTP 500',
      { status: 500, json: { success: '0' } },
      'UPSTREAM_ERROR',
      /answered smshistory with HTTP 500/,
    ],
    [
      'an HTML error page',
      { status: 502, text: '<html>Bad gateway</html>' },
      'UPSTREAM_ERROR',
      /HTTP 502/,
    ],
    ['HTML with status 200', { text: '<html>maintenance</html>' }, 'UPSTREAM_ERROR', /not JSON/],
    [
      'truncated JSON',
      { text: '{"success":"1","messa', contentType: 'application/json' },
      'UPSTREAM_ERROR',
      /not JSON/,
    ],
    [
      'success other than "1"',
      { json: { success: '0', error: 'internal detail' } },
      'UPSTREAM_ERROR',
      /success was not "1"/,
    ],
    [
      'a wrong field type',
      { json: { success: '1', 'message_count_requested ': 1, total_message_count: 'many' } },
      'UPSTREAM_ERROR',
      /total_message_count/,
    ],
    ['a connection reset', { reset: true }, 'UPSTREAM_ERROR', /could not be reached/],
    [
      'HTTP 401',
      { status: 401, json: { success: '0' } },
      'UNAUTHENTICATED',
      /refused the credentials/,
    ],
  ] as const)('%s', async (_name, failure, code, message) => {
    const { status, body } = await withFailingHistory(failure);
    expect(status).toBe(200);
    const numbers = body.data?.ownedNumbers ?? [];
    expect(numbers.map((n) => n.tid)).toEqual(TIDS);
    expect(numbers[0]?.history?.messages).toHaveLength(1);
    expect(numbers[1]?.history).toBeNull();
    expect(numbers[2]?.history?.messages).toHaveLength(1);
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({
      path: ['ownedNumbers', 1, 'history'],
      extensions: { code },
    });
    expect(body.errors?.[0]?.message).toMatch(message);
    expect(JSON.stringify(body)).not.toMatch(/S3CR3T|internal detail|<html>/);
  });

  it('a hanging upstream becomes UPSTREAM_TIMEOUT after the configured deadline', async () => {
    const { body } = await withFailingHistory({ hang: true }, 300);
    expect(body.data?.ownedNumbers?.[0]?.history).not.toBeNull();
    expect(body.data?.ownedNumbers?.[1]?.history).toBeNull();
    expect(body.errors?.[0]).toMatchObject({
      message: 'The SMS service did not answer smshistory within 300 ms',
      path: ['ownedNumbers', 1, 'history'],
      extensions: { code: 'UPSTREAM_TIMEOUT' },
    });
  });
});

describe('whole-list failures', () => {
  it('an unreachable upstream nulls the field with UPSTREAM_ERROR', async () => {
    const gone = await startScriptedUpstream(() => ({ json: {} }));
    await gone.close();
    const test = stacks.gatewayAt(gone.url);
    const { status, body } = await execute(test.gateway, OwnedNumbersQuery, {}, auth);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      data: { ownedNumbers: null },
      errors: [{ path: ['ownedNumbers'], extensions: { code: 'UPSTREAM_ERROR' } }],
    });
  });
});

describe('unexpected errors', () => {
  it('are masked: the client sees neither the message nor the stack', async () => {
    const failing = () => Promise.reject(new Error('internal detail tok-S3CR3T'));
    const gateway = createGateway({
      client: { history: failing, ownedNumbers: failing, allOwnedNumbers: failing },
      limits: DEFAULT_LIMITS,
      logger: false,
    });
    const { body } = await executeText(gateway, '{ ownedNumbers { tid } }', undefined, auth);
    expect(body.errors?.[0]).toMatchObject({
      message: 'Unexpected error.',
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    expect(JSON.stringify(body)).not.toMatch(/S3CR3T|internal detail/);
  });
});

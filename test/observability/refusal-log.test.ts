/**
 * Calls refused inside the gateway (a 429 window, an open breaker) are logged once per account
 * and window, with a count, instead of one warning each: a busy account inside its 429 window
 * must not flood the log (test/observability/warning-rollup.test.ts tests the rollup itself).
 */
import { describe, expect, it } from 'vitest';
import { captureLogs } from '../fixtures/captured-logs.js';
import { executeText } from '../fixtures/harness.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';

const stacks = scriptedStacks();
const A = { 'x-sys-id': 'AC-A', 'x-auth-token': 'tok-A' };
const B = { 'x-sys-id': 'AC-B', 'x-auth-token': 'tok-B' };
const QUERY = '{ ownedNumbers { tid } }';

describe('refusals in the log', () => {
  it('one line per account and window, however many calls it refuses', async () => {
    const { logger, lines } = captureLogs();
    const s = await stacks.start(
      (call) =>
        call.params.get('sys_id') === 'AC-B'
          ? { status: 429, text: '', headers: { 'retry-after': '60' } }
          : { json: { success: '1', data: [] } },
      { logger },
    );
    // B's first call meets the 429; its next 40 are refused inside the window; A is served.
    for (let i = 0; i < 41; i += 1) await executeText(s.gateway, QUERY, undefined, B);
    await executeText(s.gateway, QUERY, undefined, A);
    expect(s.calls((c) => c.params.get('sys_id') === 'AC-B')).toBe(1);

    const warnings = lines.filter((l) => l.level === 40 && l.code === 'RATE_LIMITED');
    // The service's 429 and the 40 refusals that followed it are one kind for one account.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/logged once per 10 s/);
    expect(typeof warnings[0]?.account).toBe('string');
    // Each request keeps its own line, with its code.
    expect(lines.filter((l) => l.msg === 'request' && l.code === 'RATE_LIMITED')).toHaveLength(41);
    expect(JSON.stringify(lines)).not.toContain('tok-B');
  });
});

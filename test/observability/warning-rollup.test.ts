/**
 * Repeated warnings are rolled up with a count (src/observability/warning-rollup.ts): one
 * request's failed calls make one line, and the same code for the same account makes one line
 * per window, whether the calls failed at the service, were refused inside the gateway, or the
 * service refused the credentials.
 */
import { describe, expect, it } from 'vitest';
import { HeldWarnings, warningRollup } from '../../src/observability/warning-rollup.js';
import { captureLogs } from '../fixtures/captured-logs.js';
import { executeText } from '../fixtures/harness.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';
import { accountScript } from '../../support/scripted-upstream.js';

const stacks = scriptedStacks();
const auth = { 'x-sys-id': 'AC-ROLLUP', 'x-auth-token': 'tok-R0LLUP-S3CRET' };
const warnings = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.level === 40);

describe('warningRollup', () => {
  it('writes the first warning of a key per window, and the count of the window before', () => {
    const { logger, lines } = captureLogs();
    let now = 0;
    const rollup = warningRollup(logger, 10_000, () => now);
    const warning = { key: 'UPSTREAM_ERROR', account: 'acc-1', fields: { code: 'UPSTREAM_ERROR' } };
    rollup.warn({ ...warning, message: 'first', count: 3 });
    now = 5_000;
    rollup.warn({ ...warning, message: 'second' });
    rollup.warn({ ...warning, account: 'acc-2', message: 'another account' });
    now = 10_000;
    rollup.warn({ ...warning, message: 'third' });
    expect(lines.map((l) => [l.msg, l.account, l.calls, l.inLastWindow])).toEqual([
      [expect.stringMatching(/^first \(more like it are counted/), 'acc-1', 3, undefined],
      [expect.stringMatching(/^another account/), 'acc-2', undefined, undefined],
      [expect.stringMatching(/^third/), 'acc-1', undefined, 4],
    ]);
  });

  it("holds a request's warnings and releases one per code, for the request's account and id", () => {
    const { logger, lines } = captureLogs();
    const held = new HeldWarnings(warningRollup(logger), 'req-9');
    for (let i = 0; i < 151; i += 1) {
      held.hold({ key: 'UPSTREAM_ERROR', fields: { code: 'UPSTREAM_ERROR' }, message: 'failed' });
    }
    held.hold({ key: 'RATE_LIMITED', account: 'service', fields: {}, message: 'refused' });
    expect(lines).toEqual([]);
    held.release('acc-9');
    expect(lines.map((l) => [l.code, l.account, l.calls, l.requestId])).toEqual([
      ['UPSTREAM_ERROR', 'acc-9', 151, 'req-9'],
      [undefined, 'service', undefined, 'req-9'],
    ]);
  });
});

describe('warnings in the log of a running gateway', () => {
  it("writes one line for one request's failed calls, with their count, never the credentials", async () => {
    const { logger, lines } = captureLogs();
    const tids = Array.from({ length: 151 }, (_, i) => `T-${i}`);
    const s = await stacks.start(
      accountScript(tids, () => ({ status: 500, json: { success: '0' } })),
      { logger, timeoutMs: 10_000 },
    );
    const query = '{ ownedNumbers { tid history(start: 0, end: 1) { totalCount } } }';
    const { body } = await executeText(s.gateway, query, undefined, auth);
    const errors = body.errors as Array<{ extensions?: { code?: string } }> | undefined;
    expect(errors?.length).toBe(151);
    // One line per code (on a busy machine a few calls may time out instead), covering all 151.
    const warned = warnings(lines);
    const codes = warned.map((l) => l.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).toContain(errors?.[0]?.extensions?.code);
    expect(warned.reduce((sum, l) => sum + Number(l.calls ?? 1), 0)).toBe(151);
    expect(typeof warned[0]?.account).toBe('string');
    expect(JSON.stringify(lines)).not.toContain('tok-R0LLUP-S3CRET');
  });

  it('rolls the retries of every call into one line per window, apart from the failures', async () => {
    const { logger, lines } = captureLogs();
    const tids = Array.from({ length: 30 }, (_, i) => `T-${i}`);
    const s = await stacks.start(
      accountScript(tids, () => ({ reset: true })),
      { logger, resilience: { retries: 2 }, timeoutMs: 10_000 },
    );
    const query = '{ ownedNumbers { tid history(start: 0, end: 1) { totalCount } } }';
    await executeText(s.gateway, query, undefined, auth);
    // Each call was tried three times (two retries): the 60 retries are one line (the rest are
    // counted in the window), and the request's 30 failures one more, with their count.
    expect(s.calls((c) => c.operation === 'smshistory')).toBe(90);
    const warned = warnings(lines);
    expect(warned.map((l) => [String(l.msg).startsWith('retrying:'), l.code, l.calls])).toEqual([
      [true, 'UPSTREAM_ERROR', undefined],
      [false, 'UPSTREAM_ERROR', 30],
    ]);
    expect(typeof warned[0]?.account).toBe('string');
  }, 30_000);

  it('writes one line per window for credentials the service keeps refusing', async () => {
    const { logger, lines } = captureLogs();
    const s = await stacks.start(
      () => ({ status: 401, json: { success: '0', error: 'Invalid credentials' } }),
      { logger },
    );
    for (let i = 0; i < 20; i += 1) {
      await executeText(s.gateway, '{ ownedNumbers { tid } }', undefined, auth);
    }
    const warned = warnings(lines);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(typeof warned[0]?.account).toBe('string');
    // Every request still has its own line, with its code: the detail is not lost.
    expect(lines.filter((l) => l.msg === 'request' && l.code === 'UNAUTHENTICATED')).toHaveLength(
      20,
    );
  });
});

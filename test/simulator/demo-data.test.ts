/**
 * The demo accounts: the same data on every build from their seeds, shaped as the service sends
 * it, newest first, with system ids rising with time across the account.
 */
import { describe, expect, it } from 'vitest';
import {
  buildAccount,
  DEMO_ACCOUNT,
  DEMO_ACCOUNT_SPECS,
  DEMO_ACCOUNTS,
  DEMO_HISTORY_ENDS_AT,
  formatUpstreamTimestamp,
} from '../../src/simulator/demo-data.js';

const epochOf = (gmt: string) => Date.parse(`${gmt.replace(' ', 'T')}Z`) / 1000;

describe('demo data', () => {
  it('is the same on every build: its seeds make it, not the clock', () => {
    for (const [index, spec] of DEMO_ACCOUNT_SPECS.entries()) {
      expect(buildAccount(spec)).toEqual(DEMO_ACCOUNTS[index]);
    }
  });

  it('writes timestamps as the service does, in UTC', () => {
    expect(formatUpstreamTimestamp(0)).toBe('1970-01-01 00:00:00');
    expect(formatUpstreamTimestamp(1_700_000_000)).toBe('2023-11-14 22:13:20');
  });

  it('lists each history newest first, ending when the process started', () => {
    const newest = Math.max(
      ...DEMO_ACCOUNT.numbers.flatMap((n) => n.messages.map((m) => epochOf(m.GMTdate))),
    );
    expect(newest).toBe(DEMO_HISTORY_ENDS_AT);
    for (const number of DEMO_ACCOUNT.numbers) {
      const times = number.messages.map((m) => epochOf(m.GMTdate));
      for (let i = 1; i < times.length; i += 1) expect(times[i]).toBeLessThan(times[i - 1]!);
      for (const message of number.messages) {
        expect(message.tid).toBe(number.tid);
        expect(message.message_id).toMatch(/^[0-9a-f]{32}$/);
        expect(message.mms_url === '').toBe(message.mms === 'no');
      }
    }
  });

  it("numbers system ids in the order of time across the account's numbers, no two alike", () => {
    const all = DEMO_ACCOUNT.numbers
      .flatMap((n) => n.messages)
      .map((m) => ({ at: epochOf(m.GMTdate), id: Number(m.system_id) }))
      .sort((a, b) => a.id - b.id);
    expect(new Set(all.map((m) => m.id)).size).toBe(all.length);
    for (let i = 1; i < all.length; i += 1)
      expect(all[i]!.at).toBeGreaterThanOrEqual(all[i - 1]!.at);
  });
});

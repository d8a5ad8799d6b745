/**
 * Load-test accounts for the simulator (support/recording-upstream.ts's `benchAccounts`): load
 * tests give every virtual user its own account, so nothing one user's requests leave behind can
 * make another's look cheaper. They all own the same numbers and differ only in credentials.
 */
import {
  buildAccount,
  DEMO_ACCOUNT_SPECS,
  type DemoAccount,
  type DemoNumber,
  type NumberSpec,
  type SimulatorCredentials,
} from '../src/simulator/index.js';

/** Credentials of load-test account `index` (0-based). */
export function benchCredentials(index: number): SimulatorCredentials {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError('bench account index must be a non-negative integer');
  }
  const suffix = String(index).padStart(5, '0');
  return { sysId: `AC-bench-${suffix}`, authToken: `bench-token-${suffix}` };
}

export interface BenchAccountsOptions {
  /** How many accounts, 1 to 100000. */
  count: number;
  /** Numbers each owns, the demo account's seven first. Default 7. */
  numbers?: number;
}

/** Messages on each generated load-test number: enough for a 50-message page. */
export const BENCH_MESSAGES_PER_NUMBER = 60;

/**
 * The numbers every load-test account owns: the demo account's seven (so `TN-L-0001` and its 450
 * messages are there), then generated numbers `TN-B-0008`, ... up to `count`, alternating local
 * and toll-free, each with BENCH_MESSAGES_PER_NUMBER messages.
 */
export function benchAccountNumbers(count: number): readonly DemoNumber[] {
  const demo = DEMO_ACCOUNT_SPECS[0];
  if (demo === undefined) throw new Error('bench-accounts: missing demo account spec');
  if (!Number.isSafeInteger(count) || count < demo.numbers.length || count > 9999) {
    throw new RangeError(`bench accounts must own from ${demo.numbers.length} to 9999 numbers`);
  }
  const generated: NumberSpec[] = [];
  for (let i = demo.numbers.length + 1; i <= count; i++) {
    const suffix = String(i).padStart(4, '0');
    generated.push({
      number: `1737555${suffix}`,
      tid: `TN-B-${suffix}`,
      type: i % 2 === 0 ? 'local' : 'tollfree',
      webhook: '',
      optin: 'yes',
      created: '2026-01-01T00:00:00Z',
      newest: '2026-12-01T00:00:00Z',
      messageCount: BENCH_MESSAGES_PER_NUMBER,
      looselyTyped: false,
      seed: 0x3000 + i,
    });
  }
  return buildAccount({
    ...demo,
    credentials: benchCredentials(0),
    systemIdBase: 9_000_000,
    numbers: [...demo.numbers, ...generated],
  }).numbers;
}

/** Accounts `0` to `count - 1`: `benchCredentials(i)`, each owning `benchAccountNumbers(numbers)`. */
export function benchAccounts({ count, numbers = 7 }: BenchAccountsOptions): DemoAccount[] {
  if (!Number.isSafeInteger(count) || count < 1 || count > 100_000) {
    throw new RangeError('benchAccounts.count must be a whole number from 1 to 100000');
  }
  // One array for all: the simulator prepares its JSON once.
  const owned = benchAccountNumbers(numbers);
  return Array.from({ length: count }, (_, i) => ({
    credentials: benchCredentials(i),
    numbers: owned,
  }));
}

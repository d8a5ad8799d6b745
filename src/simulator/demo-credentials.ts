/**
 * The demo accounts' credentials, apart from their data: the start-up banner and GraphiQL need
 * these two strings even when the simulator (and its generated data) is never loaded.
 */
export interface SimulatorCredentials {
  sysId: string;
  authToken: string;
}

export const DEMO_CREDENTIALS: SimulatorCredentials = Object.freeze({
  sysId: 'AC-demo-0001',
  authToken: 'demo-token-7f3a9c',
});

export const SECOND_DEMO_CREDENTIALS: SimulatorCredentials = Object.freeze({
  sysId: 'AC-demo-0002',
  authToken: 'demo-token-2b8e41',
});

/**
 * Credentials of load-test account `index` (0-based): the accounts themselves are
 * support/bench-accounts.ts's, which re-exports this.
 */
export function benchCredentials(index: number): SimulatorCredentials {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError('bench account index must be a non-negative integer');
  }
  const suffix = String(index).padStart(5, '0');
  return { sysId: `AC-bench-${suffix}`, authToken: `bench-token-${suffix}` };
}

/**
 * The demo accounts' credentials, apart from their data: the start-up banner and GraphiQL need
 * these two strings even when the simulator (and its generated data) is never loaded.
 */
import type { Credentials } from '../core/credentials.js';

export type { Credentials as SimulatorCredentials } from '../core/credentials.js';

export const DEMO_CREDENTIALS: Credentials = Object.freeze({
  sysId: 'AC-demo-0001',
  authToken: 'demo-token-7f3a9c',
});

export const SECOND_DEMO_CREDENTIALS: Credentials = Object.freeze({
  sysId: 'AC-demo-0002',
  authToken: 'demo-token-2b8e41',
});

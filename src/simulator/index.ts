export { startSimulator } from './server.js';
export type {
  AnsweredRequest,
  RunningSimulator,
  SimulatorOperation,
  SimulatorOptions,
} from './server.js';
export {
  buildAccount,
  DEMO_ACCOUNT,
  DEMO_ACCOUNT_SPECS,
  DEMO_HISTORY_ENDS_AT,
  SECOND_DEMO_ACCOUNT,
} from './demo-data.js';
export type { DemoAccount, DemoMessage, DemoNumber, NumberSpec } from './demo-data.js';
export { DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS } from './demo-credentials.js';
export type { SimulatorCredentials } from './demo-credentials.js';

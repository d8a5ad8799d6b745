export { startSimulator } from './server.js';
export type {
  AnsweredRequest,
  RunningSimulator,
  SimulatorObserver,
  SimulatorOperation,
  SimulatorOptions,
} from './server.js';
export {
  buildAccount,
  DEMO_ACCOUNT,
  DEMO_ACCOUNT_SPECS,
  DEMO_ACCOUNTS,
  DEMO_CREDENTIALS,
  DEMO_HISTORY_ENDS_AT,
  SECOND_DEMO_ACCOUNT,
  SECOND_DEMO_CREDENTIALS,
} from './demo-data.js';
export type {
  AccountSpec,
  DemoAccount,
  DemoMessage,
  DemoNumber,
  DemoNumberType,
  NumberSpec,
  SimulatorCredentials,
} from './demo-data.js';

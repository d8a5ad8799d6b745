export { startSimulator } from './server.js';
export type {
  BenchAccountsOptions,
  RecordedCall,
  RunningSimulator,
  SimulatorOperation,
  SimulatorOptions,
} from './server.js';
export {
  BENCH_MESSAGES_PER_NUMBER,
  benchAccountNumbers,
  benchCredentials,
  DEMO_ACCOUNT,
  DEMO_ACCOUNTS,
  DEMO_CREDENTIALS,
  DEMO_HISTORY_ENDS_AT,
  SECOND_DEMO_ACCOUNT,
  SECOND_DEMO_CREDENTIALS,
  formatUpstreamTimestamp,
} from './demo-data.js';
export type {
  DemoAccount,
  DemoMessage,
  DemoNumber,
  DemoNumberType,
  SimulatorCredentials,
} from './demo-data.js';

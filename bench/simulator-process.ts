/**
 * The simulator as its own process, for the bench: `BENCH_SIM_LATENCY_MS` of latency (plus
 * `BENCH_SIM_LATENCY_PER_IN_FLIGHT_MS` per call in flight), `BENCH_SIM_ACCOUNTS` load-test
 * accounts owning `BENCH_SIM_NUMBERS` numbers each. Over IPC it reports `ready` with its URL,
 * answers `calls` with the number of upstream calls received so far (`total`, and `byAccount`:
 * counts by `<sys_id> <operation>`, `refused <operation>` for credentials it did not accept),
 * `load` with its calls in flight (now and at peak), and `reset-load` by restarting the peak. The
 * recorded calls are drained every second so a long run does not grow the simulator's memory.
 */
import { startRecordingUpstream } from '../support/recording-upstream.js';

const simulator = await startRecordingUpstream({
  latencyMs: Number(process.env.BENCH_SIM_LATENCY_MS ?? 0),
  latencyPerInFlightMs: Number(process.env.BENCH_SIM_LATENCY_PER_IN_FLIGHT_MS ?? 0),
  benchAccounts: {
    count: Number(process.env.BENCH_SIM_ACCOUNTS ?? 64),
    numbers: Number(process.env.BENCH_SIM_NUMBERS ?? 7),
  },
});

let drained = 0;
// One key per account and operation (invented credentials all count as `refused`): bounded.
const byAccount: Record<string, number> = {};
function totalCalls(): number {
  drained += simulator.calls.length;
  for (const call of simulator.calls) {
    const key = `${call.accountSysId ?? 'refused'} ${call.operation}`;
    byAccount[key] = (byAccount[key] ?? 0) + 1;
  }
  simulator.resetCalls();
  return drained;
}
setInterval(totalCalls, 1_000).unref();

process.on('message', (message: { type?: string }) => {
  if (message.type === 'calls') process.send?.({ type: 'calls', total: totalCalls(), byAccount });
  if (message.type === 'load') process.send?.({ type: 'load', ...simulator.load() });
  if (message.type === 'reset-load') {
    simulator.resetLoad();
    process.send?.({ type: 'reset-load' });
  }
});
process.once('SIGTERM', () => {
  void simulator.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready', url: simulator.url });

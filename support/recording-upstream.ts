/**
 * The simulator (src/simulator) as tests and benches start it: every call it answers recorded,
 * its calls in flight counted, answers slowed as calls pile on, and load-test accounts beside
 * the demo ones (support/bench-accounts.ts).
 */
import {
  startSimulator,
  type AnsweredRequest,
  type RunningSimulator,
  type SimulatorOperation,
  type SimulatorOptions,
} from '../src/simulator/index.js';
import { benchAccounts, type BenchAccountsOptions } from './bench-accounts.js';

export interface RecordedCall {
  operation: SimulatorOperation;
  /** sys_id of the authenticated account; null when the credentials were not accepted. */
  accountSysId: string | null;
  /** Request parameters (query + body, body winning) WITHOUT sys_id and auth_token. */
  params: Record<string, string>;
  status: number;
}

export interface RecordingUpstreamOptions extends Omit<SimulatorOptions, 'accounts' | 'observer'> {
  /**
   * Default 0; extra delay per call already in flight when a call arrives, so the simulator
   * slows down as callers pile on (the bench's back-off scenario).
   */
  latencyPerInFlightMs?: number;
  /**
   * Extra accounts for load tests, beside the demo ones; default none. Account `i` (0-based,
   * below `count`) answers to `benchCredentials(i)` and owns `benchAccountNumbers(numbers)`.
   */
  benchAccounts?: BenchAccountsOptions;
}

export interface RecordingUpstream extends RunningSimulator {
  /**
   * Every request received on one of the three operation paths (whatever the method or
   * outcome), in order; requests to unknown paths are not recorded.
   */
  calls: RecordedCall[];
  resetCalls(): void;
  /** Calls being answered now, and the most at once since the last `resetLoad()`. */
  load(): { readonly inFlight: number; readonly peakInFlight: number };
  resetLoad(): void;
}

function recordedParams(params: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of params) {
    if (key === 'sys_id' || key === 'auth_token') continue;
    // defineProperty so that a key such as "__proto__" stays an ordinary own property.
    Object.defineProperty(out, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

export async function startRecordingUpstream(
  options: RecordingUpstreamOptions = {},
): Promise<RecordingUpstream> {
  const { latencyPerInFlightMs = 0, benchAccounts: bench, ...simulatorOptions } = options;
  if (!Number.isFinite(latencyPerInFlightMs) || latencyPerInFlightMs < 0) {
    throw new RangeError('latencyPerInFlightMs must be a non-negative finite number');
  }
  const calls: RecordedCall[] = [];
  let inFlight = 0;
  let peakInFlight = 0;
  const simulator = await startSimulator({
    ...simulatorOptions,
    ...(bench ? { accounts: benchAccounts(bench) } : {}),
    observer: {
      answering({ operation, accountSysId, params, status }: AnsweredRequest): number {
        if (operation !== null)
          calls.push({ operation, accountSysId, params: recordedParams(params), status });
        const extraMs = latencyPerInFlightMs * inFlight;
        inFlight += 1;
        if (inFlight > peakInFlight) peakInFlight = inFlight;
        return extraMs;
      },
      written(): void {
        inFlight -= 1;
      },
    },
  });
  return {
    url: simulator.url,
    deliver: (sysId, tid, body) => simulator.deliver(sysId, tid, body),
    setWebhooks: (urlOf, sysId) => simulator.setWebhooks(urlOf, sysId),
    close: () => simulator.close(),
    calls,
    resetCalls(): void {
      calls.length = 0;
    },
    load: () => ({ inFlight, peakInFlight }),
    resetLoad(): void {
      peakInFlight = inFlight;
    },
  };
}

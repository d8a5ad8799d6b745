/**
 * The service's capacity, for `npm run bench` (scenarios e and f):
 *
 * e. Fan-out against an uncapped direct client: one connection asks for `numbers` histories at
 *    once through the gateway, against a client that calls the simulator directly with one
 *    connection per call (no cap at all). The target: the gateway's p50 within 1.3x the direct
 *    client's.
 * e2. The same fan-out right after `afterLoadSeconds` of small queries (`{ ownedNumbers { tid
 *    number } }`) at `afterLoadConnections` connections, each of its own account, against the
 *    same service: the gateway's own CPU is the bottleneck during that load, and its event-loop
 *    delay must not read as the service slowing. Reported: the first fan-out after the load
 *    (recovery) and the p50 of `requests` more, against the direct client in the same minutes.
 * e3. e2 with the load sent by one account from every connection (a team sharing an inbox): that
 *    account may use the whole copy while no one else waits, and the fan-out after it must not
 *    pay for it.
 * f. Back-off: the simulator gets slower with every call it has in flight (latency = base +
 *    k x in-flight). `users` clients fan out at once, first calling the simulator directly, with
 *    nothing holding them back (piling on), then through the gateway; meanwhile one more account
 *    (the bystander) asks for its number list once per round. Reported: the service's peak calls
 *    in flight, the gateway's adaptive limit after the run, each side's fan-out time and the
 *    bystander's wait.
 */
import { Pool, request } from 'undici';
import { benchCredentials } from '../support/bench-accounts.js';
import { startEntry, startGateway, type Child } from './children.js';
import { basic, runLoad } from './load.js';
import { FANOUT_QUERY, scenarios } from './scenarios.js';

export interface FanOutTimes {
  readonly p50Ms: number;
  readonly samplesMs: readonly number[];
}

export interface BackOffSide extends FanOutTimes {
  readonly peakInFlight: number;
  /** p50 of the bystander account's single call, made while the fan-outs run. */
  readonly bystanderP50Ms: number;
}

export interface FanOutResult {
  readonly numbers: number;
  readonly latencyMs: number;
  readonly direct: FanOutTimes;
  readonly gateway: FanOutTimes & { readonly limit: number };
  readonly ratio: number;
}

export interface CapacityResult {
  readonly fanOut?: FanOutResult;
  readonly fanOutAfterLoad?: AfterLoad;
  /** e3: the same, the load from one account on every connection (a team sharing an inbox). */
  readonly fanOutAfterOneAccountLoad?: AfterLoad;
  readonly backOff?: {
    readonly users: number;
    readonly numbers: number;
    readonly baseLatencyMs: number;
    readonly perInFlightMs: number;
    readonly direct: BackOffSide;
    readonly gateway: BackOffSide & { readonly limit: number };
  };
}

export type AfterLoad = FanOutResult & {
  readonly load: {
    readonly seconds: number;
    readonly connections: number;
    /** How many accounts sent the load: one per connection, or one for all. */
    readonly accounts: 'many' | 'one';
    readonly rps: number;
    readonly failures: number;
    /** The gateway's adaptive limit as the load ended. */
    readonly limitAtEnd: number;
  };
  /** The first fan-out after the load, and the direct client's p50, in ms. */
  readonly firstMs: number;
};

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function startSimulator(
  latencyMs: number,
  perInFlightMs: number,
  accounts: number,
  numbers: number,
): Promise<Child> {
  return startEntry('simulator', 'bench/simulator-process.ts', {
    BENCH_SIM_LATENCY_MS: String(latencyMs),
    BENCH_SIM_LATENCY_PER_IN_FLIGHT_MS: String(perInFlightMs),
    BENCH_SIM_ACCOUNTS: String(accounts),
    BENCH_SIM_NUMBERS: String(numbers),
  });
}

/** What a client calling the service itself does: list the numbers, then every history at once. */
async function directFanOut(pool: Pool, vu: number): Promise<number> {
  const { sysId, authToken } = benchCredentials(vu);
  const post = async (operation: string, params: Record<string, string>) => {
    const response = await pool.request({
      method: 'POST',
      path: `/api/${operation}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ sys_id: sysId, auth_token: authToken, ...params }).toString(),
    });
    const body = (await response.body.json()) as { data?: { tid: string; number: string }[] };
    if (response.statusCode !== 200) throw new Error(`direct ${operation}: ${response.statusCode}`);
    return body;
  };
  const started = performance.now();
  const { data = [] } = await post('allownednumbers', {});
  await Promise.all(
    data.map((n) =>
      post('smshistory', { tid: n.tid, number: n.number, history_start: '0', history_end: '5' }),
    ),
  );
  return performance.now() - started;
}

async function gatewayFanOut(gatewayUrl: string, vu: number, numbers: number): Promise<number> {
  const { sysId, authToken } = benchCredentials(vu);
  const started = performance.now();
  const response = await request(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: basic(sysId, authToken),
    },
    body: JSON.stringify({ query: FANOUT_QUERY, variables: { start: 0, end: 5 } }),
  });
  const body = (await response.body.json()) as {
    errors?: unknown[];
    data?: { ownedNumbers?: unknown[] };
  };
  const ms = performance.now() - started;
  if (body.errors || body.data?.ownedNumbers?.length !== numbers) {
    throw new Error(`gateway fan-out: ${JSON.stringify(body.errors ?? body).slice(0, 300)}`);
  }
  return ms;
}

/** `rounds` rounds of `users` simultaneous fan-outs; every fan-out's time. */
async function rounds(
  users: number,
  count: number,
  fanOut: (vu: number) => Promise<number>,
): Promise<number[]> {
  return (await roundsWithBystander(users, count, fanOut, null)).fanOuts;
}

/** Like rounds(), and 20 ms into each round one call of account `users` (the bystander). */
async function roundsWithBystander(
  users: number,
  count: number,
  fanOut: (vu: number) => Promise<number>,
  bystander: ((vu: number) => Promise<number>) | null,
): Promise<{ fanOuts: number[]; bystander: number[] }> {
  const fanOuts: number[] = [];
  const waits: number[] = [];
  for (let round = 0; round < count; round += 1) {
    const late = bystander
      ? new Promise((resolve) => setTimeout(resolve, 20)).then(() => bystander(users))
      : null;
    fanOuts.push(...(await Promise.all(Array.from({ length: users }, (_, vu) => fanOut(vu)))));
    if (late) waits.push(await late);
  }
  return { fanOuts, bystander: waits };
}

async function directList(pool: Pool, vu: number): Promise<number> {
  const { sysId, authToken } = benchCredentials(vu);
  const started = performance.now();
  const response = await pool.request({
    method: 'POST',
    path: '/api/allownednumbers',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ sys_id: sysId, auth_token: authToken }).toString(),
  });
  await response.body.dump();
  return performance.now() - started;
}

async function gatewayList(gatewayUrl: string, vu: number): Promise<number> {
  const { sysId, authToken } = benchCredentials(vu);
  const started = performance.now();
  const response = await request(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: basic(sysId, authToken),
    },
    body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
  });
  const text = await response.body.text();
  if (text.includes('"errors"')) throw new Error(`gateway bystander: ${text.slice(0, 300)}`);
  return performance.now() - started;
}

async function gatewayLimit(gatewayUrl: string): Promise<number> {
  const text = await (await request(`${gatewayUrl}/metrics`)).body.text();
  const match = /^sms_upstream_concurrency\{[^}]*kind="limit"[^}]*\} (\d+)/m.exec(text);
  return match?.[1] ? Number(match[1]) : Number.NaN;
}

export interface CapacitySettings {
  readonly numbers: number;
  readonly latencyMs: number;
  readonly requests: number;
  readonly backOffUsers: number;
  readonly backOffLatencyMs: number;
  readonly backOffPerInFlightMs: number;
  /** e2: seconds of small queries before the fan-out, and their connections. */
  readonly afterLoadSeconds: number;
  readonly afterLoadConnections: number;
  readonly gatewayEnv: Record<string, string>;
  readonly gatewayNodeArgs: readonly string[];
  readonly gatewayDir: string;
}

/** One simulator at the fan-out latency with `accounts` accounts, and a gateway in front of it. */
async function fanOutStack(settings: CapacitySettings, accounts: number) {
  const simulator = await startSimulator(settings.latencyMs, 0, accounts, settings.numbers);
  const gateway = await startGateway(
    { UPSTREAM_URL: simulator.url, ...settings.gatewayEnv },
    settings.gatewayNodeArgs,
    settings.gatewayDir,
  );
  const pool = new Pool(simulator.url, { connections: settings.numbers + 1 });
  return {
    simulator,
    gateway,
    pool,
    async stop() {
      await pool.close();
      await gateway.stop();
      await simulator.stop();
    },
  };
}

/** `count` fan-outs of account 0 on each side, alternating so neither always runs on a quieter machine. */
async function alternate(
  pool: Pool,
  gatewayUrl: string,
  numbers: number,
  count: number,
): Promise<{ direct: number[]; gateway: number[] }> {
  const direct: number[] = [];
  const gateway: number[] = [];
  for (let i = 0; i < count; i += 1) {
    direct.push(await directFanOut(pool, 0));
    gateway.push(await gatewayFanOut(gatewayUrl, 0, numbers));
  }
  return { direct, gateway };
}

function fanOutResult(
  settings: CapacitySettings,
  times: { direct: number[]; gateway: number[] },
  limit: number,
): FanOutResult {
  const d = median(times.direct);
  const g = median(times.gateway);
  return {
    numbers: settings.numbers,
    latencyMs: settings.latencyMs,
    direct: { p50Ms: d, samplesMs: times.direct },
    gateway: { p50Ms: g, samplesMs: times.gateway, limit },
    ratio: g / d,
  };
}

export async function measureFanOut(settings: CapacitySettings): Promise<FanOutResult> {
  const stack = await fanOutStack(settings, 1);
  try {
    // Warm both: connections opened, the gateway's limit adapted to this service.
    await rounds(1, 3, (vu) => directFanOut(stack.pool, vu));
    await rounds(1, 10, (vu) => gatewayFanOut(stack.gateway.url, vu, settings.numbers));
    const times = await alternate(
      stack.pool,
      stack.gateway.url,
      settings.numbers,
      settings.requests,
    );
    return fanOutResult(settings, times, await gatewayLimit(stack.gateway.url));
  } finally {
    await stack.stop();
  }
}

export async function measureFanOutAfterLoad(
  settings: CapacitySettings,
  accounts: 'many' | 'one' = 'many',
): Promise<AfterLoad> {
  const connections = settings.afterLoadConnections;
  // Account 0 fans out; accounts 1..connections send the small queries, one account each, or
  // account 1 from every connection (a team of agents sharing one inbox).
  const stack = await fanOutStack(settings, connections + 1);
  try {
    await rounds(1, 3, (vu) => directFanOut(stack.pool, vu));
    await rounds(1, 3, (vu) => gatewayFanOut(stack.gateway.url, vu, settings.numbers));
    const load = await runLoad({
      url: stack.gateway.url,
      connections,
      duration: settings.afterLoadSeconds,
      requestsFor: (vu) =>
        scenarios({ fanOutNumbers: settings.numbers }).a.targets.gateway?.(
          accounts === 'one' ? 1 : vu + 1,
        ) ?? [],
    });
    const limitAtEnd = await gatewayLimit(stack.gateway.url);
    // Right after the load: the gateway first (the recovery), then both sides in turn.
    const firstMs = await gatewayFanOut(stack.gateway.url, 0, settings.numbers);
    const times = await alternate(
      stack.pool,
      stack.gateway.url,
      settings.numbers,
      settings.requests,
    );
    return {
      ...fanOutResult(settings, times, await gatewayLimit(stack.gateway.url)),
      load: {
        seconds: load.seconds,
        connections,
        accounts,
        rps: load.rps,
        failures: load.failures,
        limitAtEnd,
      },
      firstMs,
    };
  } finally {
    await stack.stop();
  }
}

export async function measureBackOff(
  settings: CapacitySettings,
): Promise<CapacityResult['backOff']> {
  const users = settings.backOffUsers;
  const simulator = await startSimulator(
    settings.backOffLatencyMs,
    settings.backOffPerInFlightMs,
    users + 1,
    settings.numbers,
  );
  const gateway = await startGateway(
    { UPSTREAM_URL: simulator.url, ...settings.gatewayEnv },
    settings.gatewayNodeArgs,
    settings.gatewayDir,
  );
  const pool = new Pool(simulator.url, { connections: (users + 1) * (settings.numbers + 1) });
  const peak = async () => {
    const { peakInFlight } = await simulator.ask<{ peakInFlight: number }>({ type: 'load' });
    return peakInFlight;
  };
  try {
    await rounds(users, 1, (vu) => directFanOut(pool, vu));
    await simulator.ask({ type: 'reset-load' });
    const direct = await roundsWithBystander(
      users,
      settings.requests,
      (vu) => directFanOut(pool, vu),
      (vu) => directList(pool, vu),
    );
    const directPeak = await peak();

    await rounds(users, 5, (vu) => gatewayFanOut(gateway.url, vu, settings.numbers));
    await simulator.ask({ type: 'reset-load' });
    const viaGateway = await roundsWithBystander(
      users,
      settings.requests,
      (vu) => gatewayFanOut(gateway.url, vu, settings.numbers),
      (vu) => gatewayList(gateway.url, vu),
    );
    return {
      users,
      numbers: settings.numbers,
      baseLatencyMs: settings.backOffLatencyMs,
      perInFlightMs: settings.backOffPerInFlightMs,
      direct: {
        p50Ms: median(direct.fanOuts),
        samplesMs: direct.fanOuts,
        peakInFlight: directPeak,
        bystanderP50Ms: median(direct.bystander),
      },
      gateway: {
        p50Ms: median(viaGateway.fanOuts),
        samplesMs: viaGateway.fanOuts,
        peakInFlight: await peak(),
        bystanderP50Ms: median(viaGateway.bystander),
        limit: await gatewayLimit(gateway.url),
      },
    };
  } finally {
    await pool.close();
    await gateway.stop();
    await simulator.stop();
  }
}

/** The fan-out target of issue 18: the gateway's p50 at most this many times the direct client's. */
const FAN_OUT_TARGET = 1.3;

export interface CapacityTarget {
  readonly name: string;
  readonly met: boolean;
  readonly value: string;
}

export function capacityTargets(result: CapacityResult): CapacityTarget[] {
  const out: CapacityTarget[] = [];
  const { fanOut, backOff } = result;
  if (fanOut) {
    out.push({
      name: `(e) ${fanOut.numbers}-number fan-out at ${fanOut.latencyMs} ms, one connection: gateway p50 <= ${FAN_OUT_TARGET} x an uncapped direct client`,
      met: fanOut.ratio <= FAN_OUT_TARGET,
      value: `${fanOut.ratio.toFixed(2)} x (${fanOut.gateway.p50Ms.toFixed(1)} vs ${fanOut.direct.p50Ms.toFixed(1)} ms; adaptive limit ${fanOut.gateway.limit})`,
    });
  }
  for (const [id, after] of [
    ['e2', result.fanOutAfterLoad],
    ['e3', result.fanOutAfterOneAccountLoad],
  ] as const) {
    if (!after) continue;
    const from = after.load.accounts === 'one' ? 'one account' : 'one account each';
    out.push({
      name: `(${id}) the same fan-out right after ${after.load.seconds.toFixed(0)} s of small queries at ${after.load.connections} connections (${from}): gateway p50 <= ${FAN_OUT_TARGET} x the direct client`,
      met: after.ratio <= FAN_OUT_TARGET && after.load.failures === 0,
      value:
        `${after.ratio.toFixed(2)} x (${after.gateway.p50Ms.toFixed(1)} vs ${after.direct.p50Ms.toFixed(1)} ms); ` +
        `first fan-out after the load ${after.firstMs.toFixed(1)} ms; adaptive limit ${after.load.limitAtEnd} as the load ended ` +
        `(${after.load.rps.toFixed(0)} req/s, ${after.load.failures} failed), ${after.gateway.limit} after the fan-outs`,
    });
  }
  if (backOff) {
    const { direct, gateway } = backOff;
    out.push({
      name: '(f) a service that slows with load: the gateway holds its calls in flight to at most half of what piling on reaches',
      met: gateway.peakInFlight * 2 <= direct.peakInFlight,
      value: `peak in flight ${gateway.peakInFlight} vs ${direct.peakInFlight}; adaptive limit after the run ${gateway.limit}`,
    });
  }
  return out;
}

export function capacityLines(result: CapacityResult): string[] {
  const { backOff } = result;
  if (!backOff) return [];
  const { direct, gateway } = backOff;
  return [
    `(f) back-off: ${backOff.users} accounts x ${backOff.numbers}-number fan-outs at once; service latency ` +
      `${backOff.baseLatencyMs} ms + ${backOff.perInFlightMs} ms per call in flight`,
    `    piling on (direct, uncapped): peak ${direct.peakInFlight} in flight, fan-out p50 ${direct.p50Ms.toFixed(0)} ms, ` +
      `a bystander's single call p50 ${direct.bystanderP50Ms.toFixed(1)} ms`,
    `    through the gateway:          peak ${gateway.peakInFlight} in flight, fan-out p50 ${gateway.p50Ms.toFixed(0)} ms, ` +
      `a bystander's single call p50 ${gateway.bystanderP50Ms.toFixed(1)} ms (limit ${gateway.limit})`,
    '',
  ];
}

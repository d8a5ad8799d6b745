/**
 * `npm run bench`: the gateway's own cost beside the upstream it fronts.
 *
 * Starts, each as its own process, a loopback simulator, the bare proxy (bench/bare-proxy.ts:
 * the same upstream calls with no GraphQL) and the gateway (`node dist/main.js`, as users run
 * it); then
 * loads them with autocannon in alternating rounds, prints a table and the targets, and writes
 * the results as JSON to bench/results/. Settings: see `usage` below.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { request } from 'undici';
import {
  capacityLines,
  capacityTargets,
  measureBackOff,
  measureFanOut,
  measureFanOutAfterLoad,
  type CapacityResult,
  type CapacitySettings,
} from './capacity.js';
import { ROOT, rssBytes, startEntry, startGateway, type Child } from './children.js';
import { runLoad } from './load.js';
import { flag, listSetting, numberSetting, setting } from './options.js';
import { scenarios, type Scenario, type ScenarioId, type TargetKind } from './scenarios.js';

const usage = `npm run bench [-- --name=value ...]   (or BENCH_NAME=value)
  --rounds=3              alternating rounds per scenario and connection count
  --duration=4            seconds per round (scenarios a, b)
  --warmup=2              seconds of warm-up per target before its rounds
  --connections=1,32      connection counts for scenarios a and b
  --latency=0             simulator latency (ms) for scenarios a, b, d
  --fanout-latency=20     simulator latency (ms) for scenario c
  --fanout-numbers=200    numbers in scenario c's account
  --fanout-requests=10    requests per round in scenario c (one connection)
  --duplicate-requests=2000  requests per round in scenario d
  --duplicate-connections=32
  --concurrency=16        the bare proxy's cap on calls per request (the gateway's limit adapts)
  --backoff-users=4       scenario f: accounts fanning out at once
  --backoff-latency=5     scenario f: the service's latency when idle (ms)
  --backoff-per-in-flight=0.5  scenario f: extra latency per call in flight at the service (ms)
  --capacity-requests=10  fan-outs per side in scenarios e and e2, rounds in scenario f
  --after-load-seconds=16 scenario e2: seconds of small queries before the fan-out
  --after-load-connections=32  scenario e2: their connections (one account each)
  --only=a,b,c,d,e,e2,e3,f  scenarios to run (e3: e2 with one account on every connection)
  --targets=direct,bare,yoga,gateway  targets to load (e.g. only the gateway, to profile it)
  --gateway-node-args=    extra node flags for the gateway, comma-separated (e.g. --cpu-prof)
  --gateway-dir=          run DIR/dist/main.js as the gateway (another built checkout, to compare)
  --gateway-env=          extra environment for the gateway, e.g. NODE_ENV=production,UPSTREAM_CONNECTIONS=32
  --out=bench/results     where the JSON goes`;

if (flag('help')) {
  console.log(usage);
  process.exit(0);
}

const settings = {
  rounds: numberSetting('rounds', 3, 1),
  duration: numberSetting('duration', 4, 1),
  warmup: numberSetting('warmup', 2, 0),
  connections: listSetting('connections', '1,32').map(Number),
  latencyMs: numberSetting('latency', 0),
  fanOutLatencyMs: numberSetting('fanout-latency', 20),
  fanOutNumbers: numberSetting('fanout-numbers', 200, 7),
  fanOutRequests: numberSetting('fanout-requests', 10, 1),
  duplicateRequests: numberSetting('duplicate-requests', 2000, 1),
  duplicateConnections: numberSetting('duplicate-connections', 32, 1),
  concurrency: numberSetting('concurrency', 16, 1),
  backOffUsers: numberSetting('backoff-users', 4, 1),
  backOffLatencyMs: numberSetting('backoff-latency', 5),
  backOffPerInFlightMs: numberSetting('backoff-per-in-flight', 0.5),
  capacityRequests: numberSetting('capacity-requests', 10, 1),
  afterLoadSeconds: numberSetting('after-load-seconds', 16, 1),
  afterLoadConnections: numberSetting('after-load-connections', 32, 1),
  only: listSetting('only', 'a,b,c,d,e,e2,e3,f') as (ScenarioId | 'e' | 'e2' | 'e3' | 'f')[],
  targets: listSetting('targets', 'direct,bare,yoga,gateway') as TargetKind[],
  gatewayNodeArgs: listSetting('gateway-node-args', ''),
  gatewayDir: setting('gateway-dir', ROOT),
  gatewayEnv: Object.fromEntries(
    listSetting('gateway-env', '').map((pair) => [
      pair.split('=')[0] ?? '',
      pair.slice(pair.indexOf('=') + 1),
    ]),
  ),
  out: setting('out', join(ROOT, 'bench', 'results')),
};
const SCENARIOS = scenarios({ fanOutNumbers: settings.fanOutNumbers });

interface Round {
  readonly rps: number;
  readonly requests: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly upstreamCalls: number;
}

interface Measurement {
  readonly scenario: ScenarioId;
  readonly target: TargetKind;
  readonly connections: number;
  readonly rounds: readonly Round[];
  /** Median of the rounds' req/s. */
  readonly rps: number;
  /** Percentiles over every response of every round. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly requests: number;
  readonly failures: number;
  /** Upstream calls per request, counted at the simulator (exact in fixed-count rounds). */
  readonly upstreamCallsPerRequest: number;
}

interface Stack {
  readonly simulator: Child;
  readonly urls: Record<TargetKind, string>;
  readonly gateway: Child;
  stop(): Promise<void>;
}

const ms = (us: number): number => Math.round(us) / 1000;
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

async function startStack(latencyMs: number, accounts: number, numbers: number): Promise<Stack> {
  const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
    BENCH_SIM_LATENCY_MS: String(latencyMs),
    BENCH_SIM_ACCOUNTS: String(accounts),
    BENCH_SIM_NUMBERS: String(numbers),
  });
  const env = { UPSTREAM_URL: simulator.url, BENCH_CONCURRENCY: String(settings.concurrency) };
  const bare = await startEntry('bare proxy', 'bench/bare-proxy.ts', env);
  const yoga = await startEntry('yoga floor', 'bench/yoga-floor.ts', {});
  // A secret of its own, as production requires one (--gateway-env=NODE_ENV=production).
  const gateway = await startGateway(
    {
      UPSTREAM_URL: simulator.url,
      GATEWAY_SECRET: 'bench-secret-'.repeat(3),
      ...settings.gatewayEnv,
    },
    settings.gatewayNodeArgs,
    settings.gatewayDir,
  );
  return {
    simulator,
    gateway,
    urls: { direct: simulator.url, bare: bare.url, yoga: yoga.url, gateway: gateway.url },
    async stop() {
      await Promise.all([gateway.stop(), bare.stop(), yoga.stop()]);
      await simulator.stop();
    },
  };
}

async function upstreamCalls(simulator: Child): Promise<number> {
  return (await simulator.ask<{ total: number }>({ type: 'calls' })).total;
}

/**
 * Waits until the simulator has had no call for 300 ms. A run that ends on time cuts requests
 * short at the client while the server still finishes their upstream calls; without this, those
 * calls would be counted in the next run.
 */
async function settle(simulator: Child): Promise<void> {
  let last = await upstreamCalls(simulator);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await upstreamCalls(simulator);
    if (now === last) return;
    last = now;
  }
}

/** One request per target, checked for a complete, correct answer before anything is timed. */
async function sanityCheck(scenario: Scenario, stack: Stack): Promise<void> {
  for (const [kind, requestsFor] of Object.entries(scenario.targets) as [
    TargetKind,
    NonNullable<Scenario['targets'][TargetKind]>,
  ][]) {
    const [first] = requestsFor(0);
    if (!first) throw new Error(`${scenario.id}/${kind}: no request`);
    const response = await request(`${stack.urls[kind]}${first.path ?? '/'}`, {
      method: 'POST',
      headers: first.headers ?? {},
      body: first.body ?? '',
    });
    const body: unknown = await response.body.json();
    const problem =
      response.statusCode === 200
        ? scenario.check(kind, body)
        : `HTTP ${response.statusCode}: ${JSON.stringify(body).slice(0, 300)}`;
    if (problem !== null) throw new Error(`${scenario.title}, ${kind}: ${problem}`);
  }
}

type Load = { readonly duration: number } | { readonly amount: number };

async function measure(
  scenario: Scenario,
  stack: Stack,
  connections: number,
  load: Load,
): Promise<Measurement[]> {
  const kinds = (Object.keys(scenario.targets) as TargetKind[]).filter((k) =>
    settings.targets.includes(k),
  );
  const label = `${scenario.title} @ ${connections} conn`;
  for (const kind of kinds) {
    if (settings.warmup <= 0) break;
    process.stderr.write(`${label}: warming up ${kind}\n`);
    await runLoad({
      url: stack.urls[kind],
      connections,
      duration: settings.warmup,
      requestsFor: scenario.targets[kind] ?? (() => []),
    });
  }
  const rounds = new Map<
    TargetKind,
    { round: Round; latency: RecordableHistogram; failures: number }[]
  >(kinds.map((k) => [k, []]));
  for (let r = 0; r < settings.rounds; r++) {
    // Rotate the order every round, so no target always runs first (or right after another).
    const order = kinds.map((_, i) => kinds[(i + r) % kinds.length] as TargetKind);
    for (const kind of order) {
      process.stderr.write(`${label}: round ${r + 1}/${settings.rounds}, ${kind}\n`);
      await settle(stack.simulator);
      const before = await upstreamCalls(stack.simulator);
      const result = await runLoad({
        url: stack.urls[kind],
        connections,
        ...load,
        requestsFor: scenario.targets[kind] ?? (() => []),
      });
      await settle(stack.simulator);
      const calls = (await upstreamCalls(stack.simulator)) - before;
      rounds.get(kind)?.push({
        round: {
          rps: result.rps,
          requests: result.requests,
          seconds: result.seconds,
          p50Ms: ms(result.latency.percentile(50)),
          p99Ms: ms(result.latency.percentile(99)),
          upstreamCalls: calls,
        },
        latency: result.latency,
        failures: result.failures,
      });
    }
  }
  return kinds.map((kind): Measurement => {
    const list = rounds.get(kind) ?? [];
    const merged = createHistogram();
    for (const { latency } of list) merged.add(latency);
    const requests = list.reduce((n, x) => n + x.round.requests, 0);
    const calls = list.reduce((n, x) => n + x.round.upstreamCalls, 0);
    return {
      scenario: scenario.id,
      target: kind,
      connections,
      rounds: list.map((x) => x.round),
      rps: median(list.map((x) => x.round.rps)),
      p50Ms: ms(merged.percentile(50)),
      p99Ms: ms(merged.percentile(99)),
      meanMs: ms(merged.mean),
      requests,
      failures: list.reduce((n, x) => n + x.failures, 0),
      upstreamCallsPerRequest: requests > 0 ? calls / requests : 0,
    };
  });
}

// ---------------------------------------------------------------------------

const machine = {
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  kernel: release(),
};

async function main(): Promise<void> {
  const started = new Date();
  console.log(
    `bench: ${machine.cores} x ${machine.cpu}, Node ${machine.node}; ${settings.rounds} rounds of ` +
      `${settings.duration} s; upstream latency ${settings.latencyMs} ms (fan-out ${settings.fanOutLatencyMs} ms)`,
  );
  const results: Measurement[] = [];
  const memory: Record<string, number> = {};
  const wanted = (id: ScenarioId | 'e' | 'e2' | 'e3' | 'f'): boolean => settings.only.includes(id);
  const maxConnections = Math.max(...settings.connections, settings.duplicateConnections);

  if (wanted('a') || wanted('b') || wanted('d')) {
    const stack = await startStack(settings.latencyMs, maxConnections, 7);
    try {
      for (const id of ['a', 'b', 'd'] as const)
        if (wanted(id)) await sanityCheck(SCENARIOS[id], stack);
      memory.gatewayRssStartBytes = rssBytes(stack.gateway.pid);
      memory.gatewayStartToHealthyMs = stack.gateway.startToHealthyMs;
      for (const id of ['a', 'b'] as const) {
        if (!wanted(id)) continue;
        for (const connections of settings.connections) {
          results.push(
            ...(await measure(SCENARIOS[id], stack, connections, { duration: settings.duration })),
          );
        }
      }
      if (wanted('d')) {
        results.push(
          ...(await measure(SCENARIOS.d, stack, settings.duplicateConnections, {
            amount: settings.duplicateRequests,
          })),
        );
      }
      memory.gatewayRssEndBytes = rssBytes(stack.gateway.pid);
    } finally {
      await stack.stop();
    }
  }

  if (wanted('c')) {
    const stack = await startStack(settings.fanOutLatencyMs, 1, settings.fanOutNumbers);
    try {
      await sanityCheck(SCENARIOS.c, stack);
      results.push(...(await measure(SCENARIOS.c, stack, 1, { amount: settings.fanOutRequests })));
    } finally {
      await stack.stop();
    }
  }

  const capacitySettings: CapacitySettings = {
    numbers: settings.fanOutNumbers,
    latencyMs: settings.fanOutLatencyMs,
    requests: settings.capacityRequests,
    backOffUsers: settings.backOffUsers,
    backOffLatencyMs: settings.backOffLatencyMs,
    backOffPerInFlightMs: settings.backOffPerInFlightMs,
    afterLoadSeconds: settings.afterLoadSeconds,
    afterLoadConnections: settings.afterLoadConnections,
    gatewayEnv: settings.gatewayEnv,
    gatewayNodeArgs: settings.gatewayNodeArgs,
    gatewayDir: settings.gatewayDir,
  };
  const capacity: CapacityResult = {
    ...(wanted('e') ? { fanOut: await measureFanOut(capacitySettings) } : {}),
    ...(wanted('e2') ? { fanOutAfterLoad: await measureFanOutAfterLoad(capacitySettings) } : {}),
    ...(wanted('e3')
      ? { fanOutAfterOneAccountLoad: await measureFanOutAfterLoad(capacitySettings, 'one') }
      : {}),
    ...(wanted('f') ? { backOff: await measureBackOff(capacitySettings) } : {}),
  };

  const gatewayRequests = results
    .filter((m) => m.target === 'gateway' && m.scenario !== 'c')
    .reduce((n, m) => n + m.requests, 0);
  const targets = [
    ...evaluateTargets(results),
    ...processTargets(memory),
    ...capacityTargets(capacity),
  ];
  console.log('');
  console.log(table(results));
  console.log('');
  for (const line of capacityLines(capacity)) console.log(line);
  for (const t of targets) console.log(`${t.met ? 'MET   ' : 'MISSED'}  ${t.name}: ${t.value}`);
  if (memory.gatewayRssStartBytes !== undefined && memory.gatewayRssEndBytes !== undefined) {
    const growth = (memory.gatewayRssEndBytes - memory.gatewayRssStartBytes) / 1e6;
    console.log(
      `gateway RSS ${(memory.gatewayRssStartBytes / 1e6).toFixed(1)} -> ${(memory.gatewayRssEndBytes / 1e6).toFixed(1)} MB ` +
        `(${growth >= 0 ? '+' : ''}${growth.toFixed(1)}) over ${gatewayRequests} gateway requests, warm-ups not counted; ` +
        'npm run soak measures this on its own',
    );
  }

  const failures = results.reduce((n, m) => n + m.failures, 0);
  mkdirSync(settings.out, { recursive: true });
  const file = join(settings.out, `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  const json = JSON.stringify(
    {
      startedAt: started.toISOString(),
      machine,
      settings,
      results,
      capacity,
      targets,
      memory,
      gatewayRequests,
    },
    null,
    2,
  );
  writeFileSync(file, json);
  writeFileSync(join(settings.out, 'latest.json'), json);
  console.log(`\nresults: ${file}`);
  if (failures > 0) {
    console.error(
      `${failures} requests failed (non-2xx, error or timeout): the figures are not valid`,
    );
    process.exitCode = 1;
  }
}

/**
 * Throughput of `m` over `other`: the median of the per-round ratios. The two ran back to back
 * in each round, so a slow spell on the machine touches both sides of a ratio, not one.
 */
function rpsRatio(m: Measurement, other: Measurement): number {
  const ratios = m.rounds.flatMap((round, i) => {
    const theirs = other.rounds[i];
    return theirs && theirs.rps > 0 ? [round.rps / theirs.rps] : [];
  });
  return median(ratios);
}

interface TargetResult {
  readonly name: string;
  readonly met: boolean;
  readonly value: string;
}

function find(
  results: readonly Measurement[],
  id: ScenarioId,
  kind: TargetKind,
  connections?: number,
) {
  return results.find(
    (m) =>
      m.scenario === id &&
      m.target === kind &&
      (connections === undefined || m.connections === connections),
  );
}

/** Memory and start-up targets: RSS of the serving process, spawn to a healthy /health. */
const RSS_START_LIMIT_MB = 90;
const RSS_AFTER_LOAD_LIMIT_MB = 170;
const START_TO_HEALTHY_LIMIT_MS = 1_000;

function processTargets(memory: Readonly<Record<string, number>>): TargetResult[] {
  const out: TargetResult[] = [];
  const { gatewayRssStartBytes: start, gatewayRssEndBytes: end } = memory;
  if (start !== undefined) {
    out.push({
      name: `gateway RSS at start <= ${RSS_START_LIMIT_MB} MB`,
      met: start / 1e6 <= RSS_START_LIMIT_MB,
      value: `${(start / 1e6).toFixed(1)} MB`,
    });
  }
  if (end !== undefined) {
    out.push({
      name: `gateway RSS after the load <= ${RSS_AFTER_LOAD_LIMIT_MB} MB`,
      met: end / 1e6 <= RSS_AFTER_LOAD_LIMIT_MB,
      value: `${(end / 1e6).toFixed(1)} MB`,
    });
  }
  const started = memory.gatewayStartToHealthyMs;
  if (started !== undefined) {
    out.push({
      name: `gateway start to healthy <= ${START_TO_HEALTHY_LIMIT_MS} ms`,
      met: started <= START_TO_HEALTHY_LIMIT_MS,
      value: `${started.toFixed(0)} ms (spawn of node dist/main.js to a 200 from /health)`,
    });
  }
  return out;
}

/** The throughput and latency targets, each against the bare proxy measured in the same rounds. */
function evaluateTargets(results: readonly Measurement[]): TargetResult[] {
  const out: TargetResult[] = [];
  const gw32 = find(results, 'a', 'gateway', 32);
  const bare32 = find(results, 'a', 'bare', 32);
  const yoga32 = find(results, 'a', 'yoga', 32);
  if (gw32 && bare32) {
    const ratio = rpsRatio(gw32, bare32);
    out.push({
      name: '(a) gateway req/s >= 0.40x the bare proxy at 32 connections',
      met: ratio >= 0.4,
      value:
        `${ratio.toFixed(2)}x (median of per-round ratios; medians ${gw32.rps.toFixed(0)} vs ${bare32.rps.toFixed(0)} req/s)` +
        (yoga32
          ? `; yoga alone, one field, no upstream call: ${rpsRatio(yoga32, bare32).toFixed(2)}x`
          : ''),
    });
  }
  const gw1 = find(results, 'a', 'gateway', 1);
  const bare1 = find(results, 'a', 'bare', 1);
  if (gw1 && bare1) {
    const added = gw1.p50Ms - bare1.p50Ms;
    out.push({
      name: '(a) p50 added over the bare proxy <= 0.35 ms at 1 connection',
      met: added <= 0.35,
      value: `+${added.toFixed(3)} ms (${gw1.p50Ms.toFixed(3)} vs ${bare1.p50Ms.toFixed(3)} ms)`,
    });
  }
  const fan = find(results, 'c', 'gateway');
  if (fan) {
    const expected = SCENARIOS.c.expectedCalls ?? 0;
    out.push({
      name: `(c) fan-out: exactly one call for the list + one per history (${expected}/query)`,
      met: fan.upstreamCallsPerRequest === expected,
      value: `${fan.upstreamCallsPerRequest.toFixed(3)} calls/query; p50 ${fan.p50Ms.toFixed(1)} ms`,
    });
  }
  const dup = find(results, 'd', 'gateway');
  if (dup) {
    const expected = SCENARIOS.d.expectedCalls ?? 0;
    out.push({
      name: `(d) one upstream call for all number needs + one per distinct history (${expected}/query)`,
      met: dup.upstreamCallsPerRequest === expected,
      value: `${dup.upstreamCallsPerRequest.toFixed(3)} calls/query over ${dup.requests} queries`,
    });
  }
  return out;
}

function table(results: readonly Measurement[]): string {
  const rows: string[][] = [
    [
      'scenario',
      'conns',
      'target',
      'req/s',
      'p50 ms',
      'p99 ms',
      'calls/req',
      'vs direct',
      'vs bare',
    ],
  ];
  let group = '';
  for (const m of results) {
    const direct = find(results, m.scenario, 'direct', m.connections);
    const bare = find(results, m.scenario, 'bare', m.connections);
    const ratio = (other: Measurement | undefined): string =>
      (m.target === 'gateway' || m.target === 'yoga') && other
        ? `${rpsRatio(m, other).toFixed(2)}x rps, ${m.p50Ms - other.p50Ms >= 0 ? '+' : ''}${(m.p50Ms - other.p50Ms).toFixed(2)} ms`
        : '';
    const key = `${m.scenario}@${m.connections}`;
    const title = key === group ? '' : SCENARIOS[m.scenario].title;
    group = key;
    rows.push([
      title,
      String(m.connections),
      m.target,
      m.rps.toFixed(0),
      m.p50Ms.toFixed(3),
      m.p99Ms.toFixed(3),
      m.upstreamCallsPerRequest.toFixed(2),
      ratio(direct),
      ratio(bare),
    ]);
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((cell, i) =>
          i >= 3 && i <= 6 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
        )
        .join('  '),
    )
    .join('\n');
}

main().catch((error: unknown) => {
  console.error('bench failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});

/**
 * `npm run soak -- --scenario=floods` (or one flood by name): the floods of the tenancy issue, each
 * short and bounded, against the built gateway (dist/main.js, --expose-gc) and the bench
 * simulator, each in its own process. Every flood reports:
 * - the gateway's RSS growth over the flood (as read at its end, and at its peak) against the
 *   warmed-up baseline, and after a full GC;
 * - another account's p50 (the bystander: one small query at a time, never cacheable) during the
 *   flood, against its p50 on the idle gateway just before;
 * - what the flood itself got, and the upstream calls it caused.
 * Targets: RSS growth under 50 MB, the bystander's p50 within 2x its idle value + 10 ms, and (invented
 * credentials) no answer with data, stale or not, for credentials the service refused. A flood
 * that makes the gateway exit is reported as such (MISSED), with what it got until then.
 *
 * Floods:
 * - invented-credentials: a made-up sys_id and token per request from 256 clients, with the
 *   response cache and stale-if-error on: queries that call the service, queries that need no
 *   call (`__typename`, once cached under any credentials) and SSE subscriptions; meanwhile a
 *   real account this copy has never seen sends its first query twice a second (answered with
 *   data, never a 429);
 * - node-lists: `nodes(ids:)` and `_entities` with 100 ids each (the most allowed), and 2,500 ids
 *   (refused by the cost limit), from three clients;
 * - ws-frames: WebSocket connections whose `connection_init` is 90 MB (and 1 MB), six at a time;
 * - apq-flood: distinct persisted-query hashes of 95 KB documents, valid and invalid, no
 *   credentials;
 * - one-sysid-many-tokens: a new token per request for one sys_id the service rate limits (429,
 *   Retry-After 2 s), then fails (503); a front on loopback answers for that sys_id and passes the
 *   rest to the simulator.
 *
 * The floods of the attacks issue, in bench/attack-floods.ts (each checked as its header says):
 * - alias-histories: 29 aliases of `history(start: 0, end: 1000)` under `ownedNumbers`, from 4
 *   clients of an account owning 200 numbers: refused by the cost limit before any upstream call;
 * - alias-histories-half: 14 aliases of `history(start: 0, end: 34)`: admitted by the cost limit,
 *   bounded by the response byte ceiling (RESPONSE_TOO_LARGE);
 * - graphiql-reload: 8 clients loading the GraphiQL page and its files, as first visits and as
 *   reloads sending the ETags back (304);
 * - idle-invented-ws: 1,000 WebSocket clients with an invented pair in `connection_init`, idle
 *   until closed, then again with a new pair; a real account subscribes once a second meanwhile;
 * - slow-headers: 2,000 TCP connections sending a request line, then a header byte a second, to a
 *   gateway with 1,024 file descriptors (cap 640); at least 12 s, so the 10 s headers timeout
 *   fires; a new client's request every 500 ms meanwhile.
 */
import { createHash } from 'node:crypto';
import { setPriority } from 'node:os';
import { request } from 'undici';
import WebSocket from 'ws';
import { benchCredentials } from '../support/bench-accounts.js';
import { ROOT, rssBytes, startEntry, startGateway, type Child } from './children.js';
import { basic } from './load.js';
import { ATTACK_FLOODS, ATTACK_PLANS } from './attack-floods.js';
import { PIPELINE_FLOODS, PIPELINE_PLANS } from './pipeline-floods.js';

export const FLOODS = [
  'invented-credentials',
  'node-lists',
  'ws-frames',
  'apq-flood',
  'one-sysid-many-tokens',
  ...ATTACK_FLOODS,
  ...PIPELINE_FLOODS,
] as const;
export type Flood = (typeof FLOODS)[number];

export interface FloodResult {
  readonly flood: Flood;
  readonly seconds: number;
  readonly requests: number;
  readonly rss: {
    readonly baselineBytes: number;
    readonly endBytes: number;
    readonly peakBytes: number;
    readonly afterGcBytes: number | null;
    /** V8 heap in use after a full GC, before and after the flood: what is really retained. */
    readonly heapBeforeBytes: number | null;
    readonly heapAfterBytes: number | null;
    /** The C heap (malloc's main arena: request bodies' buffers), after GC, before and after. */
    readonly cHeapBeforeBytes: number | null;
    readonly cHeapAfterBytes: number | null;
  };
  readonly bystander: {
    readonly idleP50Ms: number;
    readonly floodP50Ms: number;
    /** The same account's call straight to the service (no gateway): what the machine adds. */
    readonly directIdleP50Ms: number;
    readonly directFloodP50Ms: number;
    /** Its slowest answer during the flood. */
    readonly floodMaxMs: number;
  };
  /** The gateway's event loop: its longest delay during the flood (bench/child-hooks.mjs). */
  readonly loopMaxDelayMs: number | null;
  readonly upstreamCalls: number;
  /** What the flood got, by outcome (codes, close codes, HTTP statuses). */
  readonly outcomes: Record<string, number>;
  /** Scenario-specific facts and checks. */
  readonly notes: readonly string[];
  readonly failures: readonly string[];
}

/** What bench/child-hooks.mjs answers to `loop`. */
interface LoopReport {
  readonly maxMs: number;
  readonly p99Ms: number;
}

/** What bench/child-hooks.mjs answers to `gc`. */
interface GcReport {
  readonly collected: boolean;
  readonly rss: number;
  readonly heapUsed: number;
  readonly cHeap: number | null;
}

const RSS_LIMIT_BYTES = 50e6;
/** The bystander's bound: its idle p50 times BYSTANDER_RATIO, plus BYSTANDER_SLACK_MS. */
const BYSTANDER_RATIO = 2;
const BYSTANDER_SLACK_MS = 10;
/** No answer of the bystander's may take longer than this during a flood. */
const BYSTANDER_MAX_MS = 250;
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

export interface Stack {
  readonly simulator: Child;
  readonly bystander: Child;
  readonly gateway: Child;
  /** The one-sysid flood's front before the simulator (bench/front-process.ts). */
  readonly front: Child | null;
  /** Where the gateway sends its calls (the simulator, or the front before it). */
  readonly upstreamUrl: string;
  stop(): Promise<void>;
}

async function startStack(plan: FloodPlan, front429Ms: number | null): Promise<Stack> {
  const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
    BENCH_SIM_ACCOUNTS: '8',
    ...plan.simulatorEnv,
  });
  const bystanderChild = await startEntry('bystander', 'bench/bystander-process.ts', {});
  const frontChild =
    front429Ms === null
      ? null
      : await startEntry('front', 'bench/front-process.ts', {
          FRONT_UPSTREAM: simulator.url,
          FRONT_429_MS: String(front429Ms),
        });
  const upstreamUrl = frontChild?.url ?? simulator.url;
  // Node raises its soft open-file limit to the hard one at start: both are set for a smaller one.
  const files = plan.gatewayOpenFiles;
  const gateway = await startGateway(
    { UPSTREAM_URL: upstreamUrl, LOG_LEVEL: 'error', ...plan.env },
    // FLOOD_GATEWAY_ARGS adds Node flags to the gateway (`--cpu-prof --cpu-prof-dir=...`: where
    // a flood's CPU goes); NODE_OPTIONS refuses --cpu-prof.
    ['--expose-gc', ...(process.env.FLOOD_GATEWAY_ARGS?.split(' ') ?? [])],
    ROOT,
    files === undefined ? [] : ['prlimit', `--nofile=${files}:${files}`, '--'],
  );
  return {
    simulator,
    bystander: bystanderChild,
    front: frontChild,
    gateway,
    upstreamUrl,
    async stop() {
      await bystanderChild.stop();
      await gateway.stop();
      await frontChild?.stop();
      await simulator.stop();
    },
  };
}

/** The RSS of a process, or null once it has exited. */
function rssIfRunning(pid: number): number | null {
  try {
    return rssBytes(pid);
  } catch {
    return null;
  }
}

/** Upstream calls received so far: in all, and by `<sys_id> <operation>` (bench/simulator-process.ts). */
export interface UpstreamCalls {
  readonly total: number;
  readonly byAccount: Readonly<Record<string, number>>;
}

async function upstreamCalls(simulator: Child): Promise<UpstreamCalls> {
  return simulator.ask<{ type: 'calls' } & UpstreamCalls>({ type: 'calls' });
}

/** The calls made between two readings, by key (none left out). */
function callsSince(before: UpstreamCalls, after: UpstreamCalls): UpstreamCalls {
  const byAccount: Record<string, number> = {};
  for (const [key, count] of Object.entries(after.byAccount)) {
    const made = count - (before.byAccount[key] ?? 0);
    if (made > 0) byAccount[key] = made;
  }
  return { total: after.total - before.total, byAccount };
}

/** The bystander's times during the flood, or why it stopped. */
interface Measured {
  readonly times: number[];
  readonly directTimes: number[];
  readonly error: string | null;
}

/**
 * The bystander's times (bench/bystander-process.ts): `count` queries, or for `seconds`; on a
 * failed query, those measured before it and the error.
 */
async function measure(
  child: Child,
  url: string,
  load: { count: number } | { seconds: number; pauseMs: number; clients?: number },
  directUrl?: string,
): Promise<Measured> {
  const message = { type: 'measure', url, directUrl, ...load };
  const reply = await child.ask<{ times: number[]; directTimes: number[]; error?: string }>(
    message,
  );
  return { times: reply.times, directTimes: reply.directTimes, error: reply.error ?? null };
}

/** The same, where a failed query is the bench's failure. */
async function bystander(
  ...args: Parameters<typeof measure>
): Promise<{ times: number[]; directTimes: number[] }> {
  const reply = await measure(...args);
  if (reply.error !== null) throw new Error(reply.error);
  return reply;
}

/** Notes and missed checks a flood adds to its result. */
export interface Checked {
  notes: string[];
  failures: string[];
}

/** What one flood does: `worker` runs in `workers` copies until the flood's deadline. */
export interface FloodPlan {
  readonly env: Record<string, string>;
  readonly workers: number;
  /** A front before the simulator that rate limits, then fails, sys_id AC-FLOOD. */
  readonly front?: boolean;
  /** Added to the bench simulator's environment (e.g. BENCH_SIM_NUMBERS). */
  readonly simulatorEnv?: Record<string, string>;
  /** The gateway's open-file limit (it sizes the connection cap); default: this process's. */
  readonly gatewayOpenFiles?: number;
  /** The flood lasts at least this long, whatever `--flood-seconds` says (a timeout to see fire). */
  readonly minSeconds?: number;
  /**
   * One request (or connection) of the flood; returns its outcome's name, or null when this
   * client has nothing more to send (the flood's count bound is reached): its loop ends.
   */
  worker(context: FloodContext): Promise<string | null>;
  /** The warm-up's round of the flood, when two of `worker` would not do (default: that). */
  warmUp?(context: FloodContext): Promise<void>;
  /** Runs beside the flood, from 1 s in until its deadline: what another client gets meanwhile. */
  during?(context: FloodContext): Promise<Checked>;
  /** Checks after the flood, with the upstream calls made during it; failures are strings. */
  after?(
    context: FloodContext,
    outcomes: Record<string, number>,
    calls: UpstreamCalls,
  ): Promise<Checked>;
}

export interface FloodContext {
  readonly gatewayUrl: string;
  readonly stack: Stack;
  /** A number unique to this request of the flood. */
  next(): number;
  /** When the flood ends (performance.now()); 10 s from now during the warm-up. */
  deadline(): number;
}

export async function runFlood(flood: Flood, floodSeconds: number): Promise<FloodResult> {
  const plan = PLANS[flood];
  const seconds = Math.max(floodSeconds, plan.minSeconds ?? 0);
  // The front's 429 phase, from its first call for AC-FLOOD: half the flood.
  const stack = await startStack(plan, plan.front ? (seconds * 1000) / 2 : null);
  // The flood's clients run in this process. Started after the gateway, the simulator and the
  // bystander, it lowers its own priority: an attacker's CPU is its own, not the gateway's, and on
  // a 2-core machine a full-speed client at equal priority would otherwise take the cores the
  // gateway and the stand-in service need. (The direct control below shows what remains.)
  if (process.env.BENCH_FLOOD_NICE !== '0') setPriority(process.pid, 10);
  try {
    const gatewayUrl = stack.gateway.url;
    // Warm up as a copy that has served traffic: 2 s of the bystander's queries from 8 clients at
    // full speed (V8 sizes its young generation to the load it sees, some 30-50 MB, once), then
    // one round of the flood's own requests. RSS growth is what the flood adds to that.
    await bystander(stack.bystander, gatewayUrl, { seconds: 2, pauseMs: 0, clients: 8 });
    let counter = 0;
    let deadline = performance.now() + 10_000;
    const context: FloodContext = {
      gatewayUrl,
      stack,
      next: () => (counter += 1),
      deadline: () => deadline,
    };
    await (plan.warmUp?.(context) ??
      Promise.all(Array.from({ length: Math.min(plan.workers, 2) }, () => plan.worker(context))));
    const gcBefore = await stack.gateway.ask<GcReport>({ type: 'gc' });
    // Idle means idle: the warm-up's tenants gone and the loop quiet again
    // (src/traffic/fair-admission.ts limits seats for a second after the loop was last busy).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const idle = await bystander(stack.bystander, gatewayUrl, { count: 40 }, stack.simulator.url);
    const idleP50Ms = median(idle.times);
    const baselineBytes = rssBytes(stack.gateway.pid);
    const callsBefore = await upstreamCalls(stack.simulator);
    // From here on, the loop's longest delay is the flood's.
    await stack.gateway.ask<LoopReport>({ type: 'loop' });

    const outcomes: Record<string, number> = {};
    let requests = 0;
    let peakBytes = baselineBytes;
    // A flood that makes the gateway exit is a finding, not a bench error: the RSS is then the
    // last read, and what the flood and the bystander got until then is still reported.
    let lastBytes = baselineBytes;
    let exitedAfter = null as number | null;
    const started = performance.now();
    const sampler = setInterval(() => {
      const bytes = rssIfRunning(stack.gateway.pid);
      if (bytes === null) exitedAfter ??= (performance.now() - started) / 1000;
      else lastBytes = bytes;
      peakBytes = Math.max(peakBytes, lastBytes);
    }, 250);
    deadline = started + seconds * 1000;
    const worker = async (): Promise<void> => {
      while (performance.now() < deadline) {
        let outcome: string | null;
        try {
          outcome = await plan.worker(context);
        } catch (error) {
          outcome = `client error: ${error instanceof Error ? error.message.slice(0, 60) : String(error)}`;
        }
        if (outcome === null) return;
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        requests += 1;
      }
    };
    // The bystander starts once the flood is going, and stops with it (or at its first failure).
    const during = new Promise((resolve) => setTimeout(resolve, 500))
      .then(() =>
        measure(
          stack.bystander,
          gatewayUrl,
          { seconds: seconds - 0.5, pauseMs: 20 },
          stack.simulator.url,
        ),
      )
      .catch((error: unknown): Measured => ({ times: [], directTimes: [], error: String(error) }));
    // Halfway: what admission is doing (src/traffic/fair-admission.ts), as an operator sees it.
    const midway = new Promise((resolve) => setTimeout(resolve, (seconds * 1000) / 2))
      .then(() => admissionNow(gatewayUrl))
      .catch((error: unknown) => `no /metrics answer (${String(error).slice(0, 60)})`);
    // Another client's view while the flood runs, where the flood has one.
    const beside = new Promise((resolve) => setTimeout(resolve, 1_000))
      .then((): Promise<Checked> | Checked => plan.during?.(context) ?? { notes: [], failures: [] })
      .catch((error: unknown): Checked => ({
        notes: [],
        failures: [`the check beside the flood failed: ${String(error).slice(0, 100)}`],
      }));
    const [{ times, directTimes, error: bystanderError }, admission, besideChecked] =
      await Promise.all([during, midway, beside, ...Array.from({ length: plan.workers }, worker)]);
    clearInterval(sampler);
    const elapsed = (performance.now() - started) / 1000;
    const loop =
      rssIfRunning(stack.gateway.pid) === null
        ? null
        : await stack.gateway.ask<LoopReport>({ type: 'loop' });
    const endBytes = rssIfRunning(stack.gateway.pid) ?? lastBytes;
    peakBytes = Math.max(peakBytes, endBytes);
    const running = rssIfRunning(stack.gateway.pid) !== null;
    const gc: GcReport = running
      ? await stack.gateway.ask<GcReport>({ type: 'gc' })
      : { collected: false, rss: 0, heapUsed: 0, cHeap: null };
    const calls = callsSince(callsBefore, await upstreamCalls(stack.simulator));
    const floodP50Ms = median(times);
    const checked = await (
      plan.after?.(context, outcomes, calls) ??
      Promise.resolve<Checked>({ notes: [], failures: [] })
    ).catch((error: unknown): Checked => ({
      notes: [],
      failures: [`the checks after the flood failed: ${String(error).slice(0, 100)}`],
    }));
    checked.notes.unshift(`halfway: ${admission}`, ...besideChecked.notes);
    const failures = [...besideChecked.failures, ...checked.failures];
    if (!running) {
      failures.unshift(
        `the gateway exited during the flood, ${exitedAfter === null ? 'at its end' : `${exitedAfter.toFixed(1)} s in`} (its last words are above); RSS is the last read`,
      );
    }
    if (bystanderError !== null) {
      failures.push(
        `the bystander's query failed during the flood, after ${times.length} answered (its p50 is theirs): ${bystanderError.slice(0, 120)}`,
      );
    }
    if (endBytes - baselineBytes >= RSS_LIMIT_BYTES) {
      failures.push(`RSS grew ${mb(endBytes - baselineBytes)} (limit 50 MB)`);
    }
    const floodMaxMs = times.length > 0 ? Math.max(...times) : Number.NaN;
    if (floodMaxMs > BYSTANDER_MAX_MS) {
      failures.push(`bystander max ${floodMaxMs.toFixed(1)} ms > ${BYSTANDER_MAX_MS} ms`);
    }
    if (floodP50Ms > BYSTANDER_RATIO * idleP50Ms + BYSTANDER_SLACK_MS) {
      failures.push(
        `bystander p50 ${floodP50Ms.toFixed(1)} ms > 2 x idle ${idleP50Ms.toFixed(1)} ms + 10 ms`,
      );
    }
    return {
      flood,
      seconds: elapsed,
      requests,
      rss: {
        baselineBytes,
        endBytes,
        peakBytes,
        afterGcBytes: gc.collected ? gc.rss : null,
        heapBeforeBytes: gcBefore.collected ? gcBefore.heapUsed : null,
        heapAfterBytes: gc.collected ? gc.heapUsed : null,
        cHeapBeforeBytes: gcBefore.cHeap,
        cHeapAfterBytes: gc.cHeap,
      },
      bystander: {
        idleP50Ms,
        floodP50Ms,
        directIdleP50Ms: median(idle.directTimes),
        directFloodP50Ms: median(directTimes),
        floodMaxMs,
      },
      loopMaxDelayMs: loop?.maxMs ?? null,
      upstreamCalls: calls.total,
      outcomes,
      notes: checked.notes,
      failures,
    };
  } finally {
    await stack.stop();
  }
}

export function floodLines(result: FloodResult): string[] {
  const { rss, bystander } = result;
  const outcomes = Object.entries(result.outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  return [
    `${result.failures.length === 0 ? 'MET   ' : 'MISSED'}  ${result.flood}: ${result.requests} in ${result.seconds.toFixed(1)} s (${outcomes}); ${result.upstreamCalls} upstream calls`,
    `        RSS ${mb(rss.baselineBytes)} -> ${mb(rss.endBytes)} (${rss.endBytes >= rss.baselineBytes ? '+' : ''}${mb(rss.endBytes - rss.baselineBytes)}), peak +${mb(rss.peakBytes - rss.baselineBytes)}` +
      (rss.afterGcBytes === null ? '' : `, after a full GC ${mb(rss.afterGcBytes)}`) +
      (rss.heapBeforeBytes === null || rss.heapAfterBytes === null
        ? ''
        : `; V8 heap in use after GC ${mb(rss.heapBeforeBytes)} -> ${mb(rss.heapAfterBytes)}`) +
      (rss.cHeapBeforeBytes === null || rss.cHeapAfterBytes === null
        ? ''
        : `; C heap ${mb(rss.cHeapBeforeBytes)} -> ${mb(rss.cHeapAfterBytes)}`),
    `        another account's p50 ${bystander.floodP50Ms.toFixed(2)} ms vs ${bystander.idleP50Ms.toFixed(2)} ms idle (${(bystander.floodP50Ms / bystander.idleP50Ms).toFixed(2)}x), max ${bystander.floodMaxMs.toFixed(1)} ms; the event loop's longest delay ${result.loopMaxDelayMs === null ? 'n/a' : `${result.loopMaxDelayMs.toFixed(1)} ms`}`,
    `        its call straight to the service, no gateway: p50 ${bystander.directFloodP50Ms.toFixed(2)} ms vs ${bystander.directIdleP50Ms.toFixed(2)} ms idle (${(bystander.directFloodP50Ms / bystander.directIdleP50Ms).toFixed(2)}x)`,
    ...result.notes.map((n) => `        ${n}`),
    ...result.failures.map((f) => `        MISSED: ${f}`),
  ];
}

/** The admission gauges and refusals from /metrics, in one line. */
async function admissionNow(gatewayUrl: string): Promise<string> {
  const metrics = await (await request(`${gatewayUrl}/metrics`)).body.text();
  const read = (name: string): string =>
    [...metrics.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))]
      .map((m) => Number(m[1]).toFixed(2).replace(/\.00$/, ''))
      .join('+') || 'n/a';
  return `event loop utilization ${read('sms_event_loop_utilization')}, seats ${read('sms_admission_seats')}, waiting ${read('sms_admission_waiting')}, refused so far ${read('sms_admission_refused_total')}`;
}

// ---------------------------------------------------------------------------- the floods

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const response = await request(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, text: await response.body.text() };
}

function codeOf(text: string): string {
  const match = /"code":"([A-Z_]+)"/.exec(text);
  return match?.[1] ?? (text.includes('"errors"') ? 'error' : 'data');
}

const invented = (n: number) =>
  basic(`AC-made-up-${n.toString(36)}`, `made-up-token-${n.toString(36)}`);

/** The first of the bench accounts no flood or bystander uses: each is seen once, by `during`. */
const NEVER_SEEN_FIRST = 100;

/** Answers with data (not null) or a stale marker, for credentials the service refused. */
let servedToRefused = 0;

const PLANS: Record<Flood, FloodPlan> = {
  ...ATTACK_PLANS,
  ...PIPELINE_PLANS,
  'invented-credentials': {
    env: { CACHE_TTL_MS: '60000', CACHE_STALE_IF_ERROR_MS: '600000', LIVE_POLL_MS: '1000' },
    // Room for the never-seen accounts of `during` (NEVER_SEEN_FIRST on).
    simulatorEnv: { BENCH_SIM_ACCOUNTS: String(NEVER_SEEN_FIRST + 100) },
    workers: 256,
    async worker({ gatewayUrl, next }) {
      const n = next();
      const authorization = invented(n);
      if (n % 3 === 0) {
        // An SSE subscription: refused after (at most) one verification call, holding nothing.
        const response = await request(`${gatewayUrl}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            authorization,
          },
          body: JSON.stringify({ query: 'subscription { messageAdded { id } }' }),
          headersTimeout: 5_000,
          bodyTimeout: 5_000,
        });
        const text = await response.body.text();
        return `sse ${codeOf(text)}`;
      }
      const query = n % 3 === 1 ? '{ ownedNumbers { tid number } }' : '{ __typename }';
      const { text } = await post(gatewayUrl, { query }, { authorization });
      if (n % 3 === 1 && (text.includes('"stale"') || /"ownedNumbers":\[/.test(text))) {
        servedToRefused += 1;
      }
      return `${n % 3 === 1 ? 'query' : '__typename'} ${codeOf(text)}`;
    },
    async during({ gatewayUrl, deadline }) {
      // Real accounts this copy has never seen (a new user, or anyone after a restart): each
      // sends its first query while the flood runs, twice a second. None may wait behind it.
      const outcomes: Record<string, number> = {};
      const times: number[] = [];
      for (let i = 0; performance.now() < deadline() - 1_000; i += 1) {
        const { sysId, authToken } = benchCredentials(NEVER_SEEN_FIRST + i);
        const started = performance.now();
        const { status, text } = await post(
          gatewayUrl,
          { query: '{ ownedNumbers { tid } }' },
          { authorization: basic(sysId, authToken) },
        );
        times.push(performance.now() - started);
        const outcome = /"ownedNumbers":\[\{/.test(text)
          ? 'data'
          : `HTTP ${status} ${codeOf(text)}`;
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const refused = Object.entries(outcomes).filter(([outcome]) => outcome !== 'data');
      const sorted = [...times].sort((a, b) => a - b);
      return {
        notes: [
          `never-seen real accounts' first queries: ${Object.entries(outcomes)
            .map(([k, v]) => `${v} ${k}`)
            .join(
              ', ',
            )}; p50 ${(sorted[Math.floor(sorted.length / 2)] ?? NaN).toFixed(1)} ms, at most ${(sorted.at(-1) ?? NaN).toFixed(1)} ms`,
        ],
        failures: refused.map(
          ([outcome, n]) => `${n} never-seen real accounts' first queries: ${outcome}`,
        ),
      };
    },
    async after({ gatewayUrl }) {
      const metrics = await (await request(`${gatewayUrl}/metrics`)).body.text();
      const subscriptions = /^sms_live_subscriptions\{[^}]*kind="subscriptions"[^}]*\} (\d+)/m.exec(
        metrics,
      )?.[1];
      const cacheBytes = /^sms_response_cache_bytes(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1];
      const failures: string[] = [];
      if (servedToRefused > 0) {
        failures.push(`${servedToRefused} answers with data or stale for refused credentials`);
      }
      return {
        notes: [
          `answers with data or stale for refused credentials: ${servedToRefused}; live subscriptions held after: ${subscriptions ?? 'n/a'}; response cache bytes after: ${cacheBytes ?? 'n/a'} (the bystander's never-cacheable answers are not stored either)`,
        ],
        failures,
      };
    },
  },

  'node-lists': {
    env: {},
    workers: 3,
    async worker({ gatewayUrl, next }) {
      const n = next();
      // One account floods (three clients of it), as in the issue's attack.
      const { sysId, authToken } = benchCredentials(1);
      const authorization = basic(sysId, authToken);
      const ids = (count: number) =>
        Array.from({ length: count }, (_, i) => (n * 10_000 + i).toString(16).padStart(32, '0'));
      const kind = n % 3;
      const body =
        kind === 0
          ? {
              query: 'query N($ids: [ID!]!) { nodes(ids: $ids) { id } }',
              variables: { ids: ids(100) },
            }
          : kind === 1
            ? {
                query: 'query E($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
                variables: { r: ids(100).map((id) => ({ __typename: 'Message', id })) },
              }
            : {
                query: 'query N($ids: [ID!]!) { nodes(ids: $ids) { id } }',
                variables: { ids: ids(2_500) },
              };
      const { text } = await post(gatewayUrl, body, { authorization });
      return `${['nodes x100', '_entities x100', 'nodes x2500'][kind]} ${codeOf(text)}`;
    },
  },

  'ws-frames': {
    env: {},
    workers: 6,
    async worker({ gatewayUrl, next }) {
      const n = next();
      const huge = n % 2 === 0;
      const frame = huge ? hugeInit() : largeInit();
      const code = await new Promise<number>((resolve) => {
        // A zero mask leaves the payload as it is: the bench sends 90 MB without copying it.
        const socket = new WebSocket(
          `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
          ['graphql-transport-ws'],
          { generateMask: (mask: Buffer) => void mask.fill(0) },
        );
        const timer = setTimeout(() => socket.terminate(), 10_000);
        socket.on('open', () => socket.send(frame, () => undefined));
        socket.on('error', () => undefined);
        socket.on('close', (closeCode) => {
          clearTimeout(timer);
          resolve(closeCode);
        });
      });
      return `${huge ? '90 MB' : '1 MB'} init: close ${code}`;
    },
  },

  'apq-flood': {
    env: {},
    workers: 8,
    async worker({ gatewayUrl, next }) {
      const n = next();
      const valid = n % 2 === 0;
      // Distinct text per request, 95 KB in all, few tokens (a comment is not a token).
      const filler = `# ${n} ${'x'.repeat(95_000)}\n`;
      const query = filler + (valid ? '{ ownedNumbers { tid } }' : '{ noSuchField }');
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const { status, text } = await post(gatewayUrl, {
        query,
        extensions: { persistedQuery: { version: 1, sha256Hash } },
      });
      return `${valid ? 'valid' : 'invalid'} HTTP ${status} ${codeOf(text)}`;
    },
  },

  'one-sysid-many-tokens': {
    env: {},
    workers: 8,
    front: true,
    async worker({ gatewayUrl, next }) {
      const n = next();
      const { text } = await post(
        gatewayUrl,
        { query: '{ ownedNumbers { tid number } }' },
        { authorization: basic('AC-FLOOD', `token-${n}`) },
      );
      return codeOf(text);
    },
    async after({ gatewayUrl, stack }) {
      const front = await stack.front?.ask<{
        floodCalls: number;
        calls429: number;
        calls503: number;
      }>({ type: 'front' });
      const metrics = await (await request(`${gatewayUrl}/metrics`)).body.text();
      const open = /^sms_upstream_circuit_open(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1];
      const failures: string[] = [];
      if (open !== '0')
        failures.push(`the service-wide breaker is ${open === '1' ? 'open' : open}`);
      return {
        notes: [
          `calls for the flooding sys_id that reached the service: ${front?.floodCalls} (429 phase ${front?.calls429}, 503 phase ${front?.calls503}); service-wide breaker open: ${open}`,
        ],
        failures,
      };
    },
  },
};

/** `connection_init` frames of about `bytes`, made once and reused (the bench's memory, not the gateway's). */
const inits = new Map<number, Buffer>();
function init(bytes: number): Buffer {
  let frame = inits.get(bytes);
  if (!frame) {
    frame = Buffer.from(`{"type":"connection_init","payload":{"x":"${'a'.repeat(bytes)}"}}`);
    inits.set(bytes, frame);
  }
  return frame;
}
const hugeInit = () => init(90 * 1024 * 1024);
const largeInit = () => init(1024 * 1024);

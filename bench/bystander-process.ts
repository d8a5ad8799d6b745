/**
 * The soak floods' bystander, in its own process so that the flood's own work in the bench
 * process (building and sending its requests) never shows in the bystander's times. Over IPC:
 * `{ type: 'measure', url, count?, seconds?, pauseMs? }` sends one small query of another account
 * at a time (never a cache hit: `$n` changes per request), `count` of them or for `seconds`, and
 * answers `{ type: 'measure', times }` in ms (with `error`, and the times before it, once a query
 * failed); `clients` runs that many at once (the warm-up). With `directUrl` (the simulator), each
 * round also times one call of the same account straight to the service (`directTimes`): the
 * control that tells what the machine itself (the flood's client, the simulator, the scheduler
 * of 2 cores) adds, apart from the gateway.
 */
import { request } from 'undici';
import { benchCredentials } from '../support/bench-accounts.js';
import { basic } from './load.js';

const QUERY =
  'query Bystander($n: Int!) { number(tid: "TN-L-0001") { tid history(start: 0, end: $n) { totalCount } } }';
const { sysId, authToken } = benchCredentials(0);
let counter = 0;

async function once(url: string): Promise<number> {
  counter += 1;
  const started = performance.now();
  const response = await request(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: basic(sysId, authToken),
    },
    body: JSON.stringify({ query: QUERY, variables: { n: (counter % 1000) + 1 } }),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200 || text.includes('"errors"')) {
    throw new Error(`bystander: HTTP ${response.statusCode} ${text.slice(0, 200)}`);
  }
  return performance.now() - started;
}

async function direct(url: string): Promise<number> {
  const started = performance.now();
  const response = await request(`${url}/api/ownednumbers`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      sys_id: sysId,
      auth_token: authToken,
      number_type: 'local',
    }).toString(),
  });
  await response.body.text();
  if (response.statusCode !== 200) throw new Error(`bystander direct: HTTP ${response.statusCode}`);
  return performance.now() - started;
}

interface Measure {
  readonly type: 'measure';
  readonly url: string;
  readonly count?: number;
  readonly seconds?: number;
  readonly pauseMs?: number;
  readonly directUrl?: string;
  /** Clients asking at once (the warm-up); one by default. */
  readonly clients?: number;
}

process.on('message', (message: Measure) => {
  if (message.type !== 'measure') return;
  // Kept outside the loop, so a failure still reports the times measured before it.
  const times: number[] = [];
  const directTimes: number[] = [];
  void (async () => {
    const pause = (): Promise<unknown> =>
      new Promise((resolve) => setTimeout(resolve, message.pauseMs ?? 0));
    const deadline = performance.now() + (message.seconds ?? 0) * 1000;
    const loop = async (): Promise<void> => {
      while (
        message.count !== undefined ? times.length < message.count : performance.now() < deadline
      ) {
        times.push(await once(message.url));
        if (message.pauseMs) await pause();
        if (message.directUrl) {
          directTimes.push(await direct(message.directUrl));
          if (message.pauseMs) await pause();
        }
      }
    };
    await Promise.all(Array.from({ length: message.clients ?? 1 }, loop));
    process.send?.({ type: 'measure', times, directTimes });
  })().catch((error: unknown) => {
    process.send?.({ type: 'measure', times, directTimes, error: String(error) });
  });
});
// The IPC channel is unref'd by child-hooks.mjs: this keeps the process up until stop() (SIGTERM).
setInterval(() => undefined, 60_000);
process.send?.({ type: 'ready', url: '' });

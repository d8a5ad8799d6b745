/**
 * What serialising an answer costs, and what the DateTime scalar changes in it: a 50-message
 * history page (with every timestamp) is answered by the gateway in-process against the
 * simulator, graphql-jit's result object is taken as yoga hands it to JSON.stringify, and that
 * object is serialised again and again: as the gateway now builds it (timestamps as text), and
 * with its timestamps as the Date objects graphql-scalars' DateTime returns (what it built before).
 *
 *   npm run bench:serialise     (BENCH_ROUNDS rounds of 5,000, default 3)
 */
import { DEMO_ACCOUNT, DEMO_CREDENTIALS, startSimulator } from '../src/simulator/index.js';
import { assembleApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { basic } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TIMES = 5_000;
const TID = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
const MESSAGE = 'id systemId sentAt tid phone direction body mms mediaUrl status { code text ok }';
const PAGE = `{ number(tid: "${TID}") { history(start: 0, end: 50) { createdAt mostRecentAt messages { ${MESSAGE} } } } }`;

/** The answer object yoga serialises, taken at its JSON.stringify (the third run: graphql-jit's). */
async function pageAnswer(fetchPage: () => Promise<string>): Promise<object> {
  const stringify = JSON.stringify;
  let answer: object | undefined;
  JSON.stringify = ((value: unknown, ...rest: []) => {
    const data = (value as { data?: { number?: unknown } } | null)?.data;
    if (data?.number) answer = value as object;
    return stringify(value, ...rest);
  }) as typeof JSON.stringify;
  try {
    for (let run = 0; run < 3; run++) await fetchPage();
  } finally {
    JSON.stringify = stringify;
  }
  if (!answer) throw new Error('the page answer was never serialised');
  return answer;
}

/** A copy of `value` with every RFC 3339 timestamp string as a Date again. */
function withDates(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withDates);
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(value)) {
    return new Date(value);
  }
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = withDates(item);
    return copy;
  }
  return value;
}

function microsPerStringify(value: unknown): number {
  const started = performance.now();
  for (let i = 0; i < TIMES; i++) JSON.stringify(value);
  return ((performance.now() - started) * 1000) / TIMES;
}

async function main(): Promise<void> {
  const simulator = await startSimulator();
  const app = assembleApp(loadConfig({ UPSTREAM_URL: simulator.url, LIVE_POLL_MS: '0' }));
  try {
    const fetchPage = async () => {
      const response = await app.gateway.fetch('http://gateway.bench/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: basic(DEMO_CREDENTIALS.sysId, DEMO_CREDENTIALS.authToken),
        },
        body: JSON.stringify({ query: PAGE }),
      });
      return response.text();
    };
    const asText = await pageAnswer(fetchPage);
    const asDates = withDates(JSON.parse(JSON.stringify(asText)));
    const bytes = JSON.stringify(asText).length;
    if (JSON.stringify(asDates) !== JSON.stringify(asText)) throw new Error('not the same bytes');
    console.log(`a ${bytes}-byte page answer, JSON.stringify ${TIMES} times a round:`);
    for (let round = 1; round <= ROUNDS; round++) {
      const text = microsPerStringify(asText);
      const dates = microsPerStringify(asDates);
      console.log(
        `round ${round}: timestamps as text ${text.toFixed(1)} us, as Dates ${dates.toFixed(1)} us`,
      );
    }
  } finally {
    await app.close();
    await simulator.close();
  }
}

await main();

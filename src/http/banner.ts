/** What `npm start` prints for a person: where the gateway is and, with the simulator, how to try it. */
import type { RedisSettings, ResponseCacheSettings } from '../config/config.js';
import type { GatewayBuild } from '../observability/version.js';
import { DEMO_CREDENTIALS } from '../simulator/demo-credentials.js';
import { corsSummary, type CorsSettings } from './cors.js';

const { sysId, authToken } = DEMO_CREDENTIALS;
export const DEMO_AUTHORIZATION = `Basic ${Buffer.from(`${sysId}:${authToken}`).toString('base64')}`;

const DEMO_QUERY =
  '{ ownedNumbers { tid number type history(start: 0, end: 3) { totalCount messages { sentAt direction body status { code text } } } } }';

/** What is on that the first lines name: GraphiQL (GRAPHIQL), and what this copy runs. */
export interface BannerFacts {
  readonly graphiql: boolean;
  readonly build: GatewayBuild;
}

export function banner(
  endpoint: string,
  upstream: { simulatorUrl: string } | { origin: string },
  cors: CorsSettings,
  facts: BannerFacts,
): string {
  const graphiql = facts.graphiql
    ? '(GraphiQL: open it in a browser)'
    : '(GraphiQL and introspection off; GRAPHIQL=on turns them on)';
  const lines = [`SMS GraphQL gateway on ${endpoint} ${graphiql}`, versionLine(facts.build)];
  // Who may call from a browser comes before the last line (tests wait for that one).
  if ('origin' in upstream) {
    return [...lines, corsSummary(cors), `Upstream: ${upstream.origin}`].join('\n');
  }
  return [
    ...lines,
    `Upstream: built-in simulator at ${upstream.simulatorUrl} (set UPSTREAM_URL to use the real service)`,
    `Demo credentials: sys_id=${sysId} auth_token=${authToken}`,
    corsSummary(cors),
    'Try:',
    `  curl -s ${endpoint} -H 'Authorization: ${DEMO_AUTHORIZATION}' -H 'Content-Type: application/json' -d '${JSON.stringify({ query: DEMO_QUERY })}'`,
  ].join('\n');
}

/** What this copy runs, as sms_instance_info labels it: a rollout is followed by its commit. */
export function versionLine({ version, commit, builtAt }: GatewayBuild): string {
  const built = builtAt === 'unknown' ? 'run from the sources' : `built ${builtAt}`;
  return `Version ${version}, commit ${commit}, ${built}`;
}

/** The line on the response cache: where it keeps answers, and how long. */
export function responseCacheLine(
  cache: Pick<ResponseCacheSettings, 'ttlMs' | 'staleIfErrorMs'>,
  redis: RedisSettings | null,
): string {
  const where = redis ? `Redis at ${redisWhere(redis)}` : 'memory';
  const stale =
    cache.staleIfErrorMs > 0 ? `, served stale up to ${cache.staleIfErrorMs} ms more` : '';
  return `Response cache: on, in ${where}, answers kept ${cache.ttlMs} ms${stale}`;
}

/** Where Redis is (never a password); Sentinel mode does not use REDIS_URL's host. */
function redisWhere(redis: RedisSettings): string {
  const list = (nodes: readonly { host: string; port: number }[]): string =>
    nodes.map((n) => `${n.host.includes(':') ? `[${n.host}]` : n.host}:${n.port}`).join(',');
  if (redis.sentinels.length > 0) {
    return `the primary "${redis.sentinelName ?? 'mymaster'}" of sentinels ${list(redis.sentinels)}`;
  }
  if (redis.clusterNodes.length > 0)
    return `cluster ${[redis.url.host, list(redis.clusterNodes)].join(',')}`;
  return redis.url.host;
}

/** Where to point a browser or a scraper: a wildcard address (every interface) as localhost. */
export function shownHost(host: string): string {
  if (isWildcard(host)) return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** The metrics URL, and whether it listens on every interface, since it asks no credentials. */
export function metricsLine(host: string, port: number): string {
  const where = isWildcard(host) ? ` (listening on ${host}: every interface)` : '';
  return `Metrics: http://${shownHost(host)}:${port}/metrics${where}`;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

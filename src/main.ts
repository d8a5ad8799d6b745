/**
 * The only file that listens: config -> (built-in simulator) -> upstream pool -> gateway ->
 * HTTP server. Drains and closes everything on SIGTERM/SIGINT.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createResponseCache } from './cache.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createGateway, GRAPHQL_PATH } from './server.js';
import { createLogger } from './logger.js';
import { DEMO_CREDENTIALS, startSimulator, type RunningSimulator } from './simulator/index.js';
import { createUpstreamClient, createUpstreamPool } from './upstream/client.js';
import { withResilience } from './upstream/resilience.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }

  const logger = createLogger(config.logLevel);
  let simulator: RunningSimulator | null = null;
  let upstreamUrl = config.upstream.url;
  if (upstreamUrl === null) {
    simulator = await startSimulator({ latencyMs: config.simulatorLatencyMs });
    upstreamUrl = new URL(simulator.url);
  }

  const { timeoutMs } = config.upstream;
  const pool = createUpstreamPool(upstreamUrl, {
    connections: config.upstream.connections,
    timeoutMs,
  });
  const client = withResilience(
    createUpstreamClient({ dispatcher: pool, baseUrl: upstreamUrl, timeoutMs }),
    {
      ...config.upstream,
      logger,
    },
  );
  const demoAuthorization = simulator
    ? basicAuthorization(DEMO_CREDENTIALS.sysId, DEMO_CREDENTIALS.authToken)
    : null;

  const responseCache = createResponseCache(config.responseCache, { logger });
  // Redis being down costs cache misses, not the gateway: say so, and start anyway.
  if (responseCache && !(await responseCache.ready(5_000)))
    logger.warn('Response cache: Redis not reachable yet; answering without the cache meanwhile');

  let draining = false;
  const gateway = createGateway({
    client,
    limits: config.limits,
    logger,
    responseCache,
    graphiqlHeaders: demoAuthorization ? { Authorization: demoAuthorization } : {},
    isReady: () => !draining,
  });
  const server = createServer(gateway);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });

  const { port } = server.address() as AddressInfo;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const endpoint = `http://${shownHost}:${port}${GRAPHQL_PATH}`;
  console.log(`SMS GraphQL gateway on ${endpoint} (GraphiQL: open it in a browser)`);
  if (simulator && demoAuthorization) {
    console.log(
      `Upstream: built-in simulator at ${simulator.url} (set UPSTREAM_URL to use the real service)`,
    );
    console.log(
      `Demo credentials: sys_id=${DEMO_CREDENTIALS.sysId} auth_token=${DEMO_CREDENTIALS.authToken}`,
    );
    console.log('Try:');
    console.log(`  ${demoCurl(endpoint, demoAuthorization)}`);
  } else {
    console.log(`Upstream: ${upstreamUrl.origin}`);
  }
  if (responseCache) {
    const { ttlMs, redisUrl } = config.responseCache;
    const where = redisUrl ? `Redis at ${redisUrl.host}` : 'memory';
    console.log(`Response cache: on, in ${where}, answers kept ${ttlMs} ms`);
  }

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    draining = true;
    console.log(`${signal}: draining and shutting down`);
    const force = setTimeout(() => {
      console.error(`Shutdown took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    server.close(() => {
      void Promise.allSettled([pool.close(), simulator?.close(), responseCache?.close()]).then(
        () => {
          clearTimeout(force);
          process.exit(0);
        },
      );
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

function basicAuthorization(sysId: string, authToken: string): string {
  return `Basic ${Buffer.from(`${sysId}:${authToken}`).toString('base64')}`;
}

function demoCurl(endpoint: string, authorization: string): string {
  const query =
    '{ ownedNumbers { tid number type history(start: 0, end: 3) { totalCount messages { sentAt direction body status { code text } } } } }';
  return `curl -s ${endpoint} -H 'Authorization: ${authorization}' -H 'Content-Type: application/json' -d '${JSON.stringify({ query })}'`;
}

main().catch((error: unknown) => {
  console.error('The gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});

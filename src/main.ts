/** The process: loads the configuration, starts the app and its runtime (src/runtime.ts), says where. */
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { createApp } from './start.js';
import { startFailure, startRuntime } from './runtime.js';
import { ConfigError, loadConfig } from './config/config.js';
import { banner, metricsLine, responseCacheLine, shownHost } from './http/banner.js';
import { corsRefusesAll, corsSummary } from './http/cors.js';
import { GRAPHQL_PATH } from './http/paths.js';
import { flushLogs } from './observability/logger.js';
import { gatewayBuild } from './observability/version.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // V8 lets the old generation grow fourfold between full collections: under a flood of large
  // requests, most of the RSS growth (docs/performance.md "Memory under large requests").
  const { heapGrowingPercent } = config;
  if (heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
  const app = await createApp(config);
  const { logger, simulator, upstreamUrl } = app;
  const { address, metricsServer, exitOnSignals } = await startRuntime(app);

  const endpoint = `http://${shownHost(config.host)}:${address.port}${GRAPHQL_PATH}`;
  // The human lines go to stderr: stdout carries only JSON log lines, for log shippers.
  const cors = { origins: config.corsOrigins, allowLoopback: simulator !== null };
  const where = simulator ? { simulatorUrl: simulator.url } : { origin: upstreamUrl.origin };
  console.error(
    banner(endpoint, where, cors, { graphiql: config.graphiql, build: gatewayBuild() }),
  );
  // Demo mode says so in the JSON log too, where an operator who misspelt UPSTREAM_URL looks.
  const upstream = simulator
    ? { upstream: 'simulator', simulatorUrl: simulator.url, secretSource: config.secret.source }
    : { upstream: upstreamUrl.origin };
  if (logger) logger.info({ endpoint, ...upstream }, 'listening');
  if (logger && config.secret.source === 'process') {
    logger.warn(
      'no GATEWAY_SECRET: cursors and resume tokens end with this process (clients get RESYNC_REQUIRED after a restart), and account ids differ on every copy',
    );
  }
  if (logger)
    logger[corsRefusesAll(cors) ? 'warn' : 'info']({ cors: cors.origins }, corsSummary(cors));
  if (app.responseCache) console.error(responseCacheLine(config.responseCache, config.redis));
  if (metricsServer)
    console.error(metricsLine(config.metricsHost, (metricsServer.address() as AddressInfo).port));
  exitOnSignals();
}

main().catch((error: unknown) => {
  // Configuration problems already say what to fix; anything else gets a short preface.
  const known =
    error instanceof ConfigError ||
    (error instanceof Error && error.name === 'PersistedOperationsError');
  console.error(known ? error.message : `The gateway failed to start: ${startFailure(error)}`);
  flushLogs();
  process.exit(1);
});

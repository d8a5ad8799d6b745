/** The process's life: loads the configuration, starts and listens, drains on SIGTERM/SIGINT. */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { createApp, listen } from './start.js';
import { ConfigError, loadConfig } from './config/config.js';
import { banner, metricsLine, responseCacheLine, shownHost } from './http/banner.js';
import { corsRefusesAll, corsSummary } from './http/cors.js';
import { GRAPHQL_PATH } from './http/server.js';
import { flushLogs } from './observability/logger.js';
import type { GatewayMetrics } from './observability/metrics.js';
import { gatewayBuild } from './observability/version.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // V8 lets the old generation grow fourfold between full collections: under a flood of large
  // requests, most of the RSS growth (docs/performance.md "Memory under large requests").
  const { heapGrowingPercent } = config;
  if (heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
  const app = await createApp(config);
  const { logger, simulator, upstreamUrl, metrics } = app;
  const { port } = await listen(app);

  const metricsServer =
    metrics && config.metricsPort !== null
      ? await listenForMetrics(metrics, config.metricsPort, config.metricsHost)
      : null;

  const endpoint = `http://${shownHost(config.host)}:${port}${GRAPHQL_PATH}`;
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
  if (metricsServer) {
    const metricsPort = (metricsServer.address() as AddressInfo).port;
    console.error(metricsLine(config.metricsHost, metricsPort));
  }

  let stopping = false;
  // The drain (docs/deploy.md "Shutdown"). SIGINT (Ctrl-C) skips the readiness delay: no balancer
  // waits on it.
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.connections.closeAfterEachResponse();
    const delayMs = signal === 'SIGTERM' ? config.shutdown.readinessDelayMs : 0;
    if (logger) logger.info({ signal, readinessDelayMs: delayMs }, 'draining: /readiness now 503');
    const deadline = delayMs + config.shutdown.timeoutMs;
    const force = setTimeout(() => {
      // Idle kept-alive connections close now; a request still running is cut, and exit says so.
      const running = app.connections.closeRemaining();
      if (running === 0) return;
      console.error(
        `Shutdown took longer than ${deadline} ms with ${running} requests running; exiting`,
      );
      flushLogs();
      process.exit(1);
    }, deadline);
    force.unref();
    await new Promise((resolve) => setTimeout(resolve, delayMs));

    if (logger) logger.info('draining: no longer accepting connections');
    await app.connections.stopListening();
    const streamsEnded = app.endStreams();
    metricsServer?.close();
    await app.connections.allClosed();
    // Their Redis connections are quit before exit, not cut.
    await Promise.allSettled([streamsEnded, app.close()]);
    clearTimeout(force);
    if (logger) logger.info('stopped');
    flushLogs();
    process.exit(0);
  };
  process.once('SIGTERM', (signal) => void shutdown(signal));
  process.once('SIGINT', (signal) => void shutdown(signal));
}

/** One line a person can act on; a port in use is the usual one. */
function startFailure(error: unknown): string {
  const { code, port, address } = (error ?? {}) as Record<string, unknown>;
  if (code === 'EADDRINUSE') {
    return `port ${String(port)} on ${String(address)} is already in use: stop what listens there or set PORT (METRICS_PORT for metrics)`;
  }
  if (code === 'EACCES') {
    return `not allowed to listen on port ${String(port)}: use a port above 1023 or grant the capability`;
  }
  return error instanceof Error ? error.message : String(error);
}

async function listenForMetrics(
  metrics: GatewayMetrics,
  port: number,
  host: string,
): Promise<Server> {
  const { createMetricsServer } = await import('./observability/metrics-server.js');
  const server = createMetricsServer(metrics.registry);
  server.listen(port, host);
  await once(server, 'listening');
  // Once listening, a failure of the scrape server is said, not fatal to the gateway.
  server.on('error', (error) => console.error(`metrics server: ${startFailure(error)}`));
  return server;
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

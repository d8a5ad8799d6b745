/**
 * The process's whole life, in one place: loads the configuration, starts the gateway
 * (src/start.ts), listens, says where, and drains and stops on SIGTERM/SIGINT.
 */
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

/**
 * V8 paces full collections by how far the old generation grew since the last one; with a heap
 * limit of a few gigabytes it lets it grow fourfold. The gateway keeps little (its stores are
 * bounded by bytes), so under a flood of large requests that pacing is most of its RSS growth:
 * 95 KB documents, a hundred a second, grew RSS by 60-100 MB of garbage awaiting collection, and
 * by under 20 MB at 50% (`npm run soak -- --scenario=apq-flood`, docs/limits.md). V8 reads this
 * flag at each collection, so setting it here, before any load, is enough.
 */
function paceGarbageCollection(heapGrowingPercent: number): void {
  if (heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  paceGarbageCollection(config.heapGrowingPercent);
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
  console.error(
    banner(
      endpoint,
      simulator ? { simulatorUrl: simulator.url } : { origin: upstreamUrl.origin },
      cors,
    ),
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
  /**
   * The drain (docs/deploy.md "Shutdown"): SIGTERM first answers 503 on /readiness for
   * SHUTDOWN_READINESS_DELAY_MS while serving on, each response closing its connection, so the
   * load balancer takes this copy out before it stops listening; then it stops accepting, ends
   * live streams, lets requests in flight finish (SHUTDOWN_TIMEOUT_MS at most), quits Redis and
   * exits 0. SIGINT (Ctrl-C at a terminal) skips the delay: no balancer waits on it.
   */
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.connections.closeAfterEachResponse();
    const delayMs = signal === 'SIGTERM' ? config.shutdown.readinessDelayMs : 0;
    if (logger) logger.info({ signal, readinessDelayMs: delayMs }, 'draining: /readiness now 503');
    const deadline = delayMs + config.shutdown.timeoutMs;
    const force = setTimeout(() => {
      // Idle connections a client was told it could keep are closed now; a request still
      // running is cut, and the exit code says so.
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
  const { code, port, address } = (error ?? {}) as {
    code?: unknown;
    port?: unknown;
    address?: unknown;
  };
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
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

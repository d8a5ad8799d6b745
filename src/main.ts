/**
 * The only file that listens: loads the configuration, lets createApp() (src/app.ts) assemble
 * the gateway, listens, and drains on SIGTERM/SIGINT.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config/config.js';
import { banner } from './http/banner.js';
import { corsRefusesAll, corsSummary } from './http/cors.js';
import { GRAPHQL_PATH } from './http/server.js';
import { flushLogs } from './observability/logger.js';
import type { GatewayMetrics } from './observability/metrics.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const app = await createApp(config);
  const { server, logger, simulator, upstreamUrl, metrics } = app;
  const { port } = await app.listen();

  const metricsServer =
    metrics && config.metricsPort !== null
      ? await listenForMetrics(metrics, config.metricsPort, config.host)
      : null;

  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const endpoint = `http://${shownHost}:${port}${GRAPHQL_PATH}`;
  // The human lines go to stderr: stdout carries only JSON log lines, for log shippers.
  const cors = { origins: config.corsOrigins, allowLoopback: simulator !== null };
  console.error(
    banner(
      endpoint,
      simulator ? { simulatorUrl: simulator.url } : { origin: upstreamUrl.origin },
      cors,
    ),
  );
  if (logger) logger.info({ endpoint, upstream: upstreamUrl.origin }, 'listening');
  if (logger)
    logger[corsRefusesAll(cors) ? 'warn' : 'info']({ cors: cors.origins }, corsSummary(cors));
  if (app.responseCache) {
    const { ttlMs, redisUrl, staleIfErrorMs } = config.responseCache;
    const where = redisUrl ? `Redis at ${redisUrl.host}` : 'memory';
    const stale = staleIfErrorMs > 0 ? `, served stale up to ${staleIfErrorMs} ms more` : '';
    console.error(`Response cache: on, in ${where}, answers kept ${ttlMs} ms${stale}`);
  }
  if (metricsServer) {
    const metricsPort = (metricsServer.address() as AddressInfo).port;
    console.error(`Metrics: http://${shownHost}:${metricsPort}/metrics`);
  }

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.drain();
    if (logger) logger.info({ signal }, 'draining and shutting down');
    const force = setTimeout(() => {
      console.error(`Shutdown took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
      flushLogs();
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    const streamsEnded = app.endStreams();
    metricsServer?.close();
    // A keep-alive connection whose request finishes while draining would otherwise stay open
    // until the client drops it, holding the exit back: close each one as soon as it is idle.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      // Their Redis connections are quit before exit, not cut.
      void Promise.allSettled([streamsEnded, app.close()]).then(() => {
        clearTimeout(force);
        flushLogs();
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
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
  console.error(
    known
      ? error.message
      : `The gateway failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  flushLogs();
  process.exit(1);
});

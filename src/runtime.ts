/**
 * The process's life in one place: start (listen), ready, drain, stop (docs/deploy.md
 * "Shutdown"), SIGTERM and SIGINT, and every timer that lives as long as the process. The parts
 * keep their own jobs and are called from here: src/start.ts makes the app and listens,
 * src/http/connections.ts lets go of connections (readiness reads its `draining`, so the drain's
 * first step flips /readiness to 503), src/app.ts ends its streams and closes what it holds.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { App } from './app.js';
import { listen } from './start.js';
import { flushLogs } from './observability/logger.js';
import { stopProcessLoop } from './traffic/loop-monitor.js';

/** Listens (the gateway, then the metrics port if it has its own); ready once this resolves. */
export async function startRuntime(app: App) {
  const { config, logger, connections, metrics } = app;
  const address = await listen(app);
  let metricsServer: Server | null = null;
  if (metrics && config.metricsPort !== null) {
    const { createMetricsServer } = await import('./observability/metrics-server.js');
    metricsServer = createMetricsServer(metrics.registry);
    await once(metricsServer.listen(config.metricsPort, config.metricsHost), 'listening');
    // Once listening, a failure of the scrape server is said, not fatal to the gateway.
    metricsServer.on('error', (error) => console.error(`metrics server: ${startFailure(error)}`));
  }

  // The drain (docs/deploy.md "Shutdown"), then the stop: what the app holds, and the process's
  // own timers. SIGINT (Ctrl-C) skips the readiness delay: no balancer waits on it. Resolves with
  // the exit code.
  const drainThenStop = (signal: NodeJS.Signals): Promise<number> => {
    connections.closeAfterEachResponse();
    const delayMs = signal === 'SIGTERM' ? config.shutdown.readinessDelayMs : 0;
    if (logger) logger.info({ signal, readinessDelayMs: delayMs }, 'draining: /readiness now 503');
    const deadline = delayMs + config.shutdown.timeoutMs;
    let force: NodeJS.Timeout | undefined;
    const cut = new Promise<number>((resolve) => {
      force = setTimeout(() => {
        // Idle kept-alive connections close now; a request still running is cut, and exit says so.
        const running = connections.closeRemaining();
        if (running === 0) return;
        console.error(
          `Shutdown took longer than ${deadline} ms with ${running} requests running; exiting`,
        );
        resolve(1);
      }, deadline).unref();
    });
    const drained = (async (): Promise<number> => {
      await delay(delayMs);
      if (logger) logger.info('draining: no longer accepting connections');
      await connections.stopListening();
      const streamsEnded = app.endStreams();
      metricsServer?.close();
      await connections.allClosed();
      // Their Redis connections are quit before exit, not cut.
      await Promise.allSettled([streamsEnded, app.close()]);
      stopProcessLoop();
      clearTimeout(force);
      if (logger) logger.info('stopped');
      return 0;
    })();
    return Promise.race([drained, cut]);
  };
  let draining: Promise<number> | null = null;
  const drain = (signal: NodeJS.Signals): Promise<number> => (draining ??= drainThenStop(signal));

  return {
    address,
    metricsServer,
    drain,
    /** SIGTERM or SIGINT, whichever comes first, drains; then the process exits with its code. */
    exitOnSignals(): void {
      const exit = (signal: NodeJS.Signals): void =>
        void drain(signal).then((code) => {
          flushLogs();
          process.exit(code);
        });
      process.once('SIGTERM', exit);
      process.once('SIGINT', exit);
    },
  };
}

/** One line a person can act on; a port in use is the usual one. */
export function startFailure(error: unknown): string {
  const { code, port, address } = (error ?? {}) as Record<string, unknown>;
  if (code === 'EADDRINUSE')
    return `port ${String(port)} on ${String(address)} is already in use: stop what listens there or set PORT (METRICS_PORT for metrics)`;
  if (code === 'EACCES')
    return `not allowed to listen on port ${String(port)}: use a port above 1023 or grant the capability`;
  return error instanceof Error ? error.message : String(error);
}

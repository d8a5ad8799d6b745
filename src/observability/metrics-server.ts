/** METRICS_PORT: /metrics on a port of its own (an internal network). Anything else is a 404. */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export function createMetricsServer(registry: Registry): Server {
  return createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(`Metrics failed: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  });
}

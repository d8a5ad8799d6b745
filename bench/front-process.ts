/**
 * The one-sysid flood's front, in its own process like the simulator behind it (so that the flood's
 * client, which the bench runs at a lower priority, never slows the service's side): calls for
 * sys_id AC-FLOOD get a 429 (Retry-After 2) for the first `FRONT_429_MS` from the first of them,
 * then a 503; everything else is passed to the simulator at `FRONT_UPSTREAM`. Over IPC it reports
 * `ready` with its URL and answers `front` with what it saw of AC-FLOOD.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = process.env.FRONT_UPSTREAM ?? '';
const phase429Ms = Number(process.env.FRONT_429_MS ?? 5_000);
const pool = new Pool(upstream, { connections: 64 });
const seen = { floodCalls: 0, calls429: 0, calls503: 0 };
let startedAt = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    if (new URLSearchParams(body).get('sys_id') === 'AC-FLOOD') {
      seen.floodCalls += 1;
      startedAt ||= performance.now();
      if (performance.now() - startedAt < phase429Ms) {
        seen.calls429 += 1;
        res.writeHead(429, { 'retry-after': '2', 'content-type': 'application/json' });
        res.end('{"success":"0","error":"Too many requests"}');
      } else {
        seen.calls503 += 1;
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('unavailable');
      }
      return;
    }
    pool
      .request({
        method: 'POST',
        path: req.url ?? '/',
        headers: { 'content-type': req.headers['content-type'] ?? 'text/plain' },
        body,
      })
      .then(async (answer) => {
        const text = await answer.body.text();
        res.writeHead(answer.statusCode, { 'content-type': 'application/json' });
        res.end(text);
      })
      .catch(() => res.destroy());
  });
});

process.on('message', (message: { type?: string }) => {
  if (message.type === 'front') process.send?.({ type: 'front', ...seen });
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void pool.close().then(() => process.exit(0)));
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` });
});

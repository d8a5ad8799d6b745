/**
 * The doorbell's route (docs/live-updates.md "The doorbell"): `POST /hooks/ring/<tid>/<signature>`
 * rings the number whatever the body says. It needs no credentials and answers nothing but a
 * status: 202 rung, 404 for a signature that is not the number's (or any other path below it),
 * 405 another method, 413 a body over the limit. The body is never parsed, and never read past the
 * limit: a declared larger one is refused before a byte is read, and the connection closed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Doorbell } from '../live/doorbell.js';
import { RING_PATH } from './paths.js';

export interface DoorbellRouteOptions {
  /** Largest body read (RING_MAX_BODY_BYTES). */
  readonly maxBodyBytes: number;
}

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/** `listener` with the doorbell's paths answered in front of it (and of admission: see below). */
export function withDoorbellRoute(
  listener: Listener,
  doorbell: Doorbell,
  options: DoorbellRouteOptions,
): Listener {
  const prefix = `${RING_PATH}/`;
  // Not admitted: a ring never calls the service itself (its poll is the number's, at most one a
  // second), and a forged one costs an HMAC; waiting behind a busy copy's queries would only delay
  // the messages it announces.
  return (request, response) => {
    const url = request.url ?? '/';
    if (!url.startsWith(prefix)) return listener(request, response);
    ring(request, response, url.slice(prefix.length), doorbell, options.maxBodyBytes);
  };
}

function ring(
  request: IncomingMessage,
  response: ServerResponse,
  rest: string,
  doorbell: Doorbell,
  maxBodyBytes: number,
): void {
  const target = rest.split(/[?#]/, 1)[0] ?? '';
  const parts = target.split('/');
  const tid = parts.length === 2 ? decoded(parts[0]!) : null;
  const signature = parts[1] ?? '';
  if (tid === null || tid === '' || signature === '') return answer(request, response, 404);
  if (request.method !== 'POST') return answer(request, response, 405, { allow: 'POST' });
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > maxBodyBytes) return answer(request, response, 413);
  // Read (and dropped) up to the limit, so the connection can carry the next ring.
  let size = 0;
  let over = false;
  request.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBodyBytes || over) return;
    over = true;
    request.pause();
    answer(request, response, 413);
  });
  // A client gone mid-body is no ring.
  request.on('error', () => undefined);
  request.on('end', () => {
    if (over) return;
    if (!doorbell.verify(tid, signature)) return answer(request, response, 404);
    doorbell.ring(tid);
    answer(request, response, 202);
  });
}

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * A status and no body. When the request's body has not been read to its end the connection is
 * closed after the answer: Node would otherwise read the rest, however large, to reuse it.
 */
function answer(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) return;
  const unread = !request.complete;
  response.writeHead(status, {
    'content-length': '0',
    'cache-control': 'no-store',
    ...(unread ? { connection: 'close' } : {}),
    ...headers,
  });
  response.end();
  if (unread) response.once('finish', () => request.socket.destroySoon());
}

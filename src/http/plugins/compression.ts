/**
 * Compressed answers for clients that ask (`Accept-Encoding: gzip` or `deflate`): the
 * compression itself is @whatwg-node/server's useContentEncoding; the policy is ours:
 * - only whole answers of at least MIN_BYTES (a small answer costs more to compress than to send);
 * - never a stream (SSE, multipart @defer parts): a compressor holds bytes back until its block
 *   fills, which would delay live events and deferred parts;
 * - gzip, else deflate; not br: Node's brotli defaults to quality 11, several times gzip's CPU
 *   per byte, which any client could ask for on the 9 MB GraphiQL page;
 * - request bodies are not decompressed (the body limit counts what arrives on the wire);
 * - HTML (the 9 MB GraphiQL page, the same bytes every visit) is gzipped once and kept: doing it
 *   per visit costs ~200 ms of CPU each time.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { useContentEncoding } from '@whatwg-node/server';
import type { Plugin } from 'graphql-yoga';

const gzip = promisify(gzipCallback);

const MIN_BYTES = 1024;
const STREAMING = /^(text\/event-stream|multipart\/mixed)/i;
const OFFERED = ['gzip', 'deflate'] as const;

/** The first offered encoding the client accepts (q > 0), or null. */
export function chooseEncoding(acceptEncoding: string | null): (typeof OFFERED)[number] | null {
  if (!acceptEncoding) return null;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(name ?? '', q ? Number(q.slice(2)) : 1);
  }
  for (const encoding of OFFERED) {
    const q = accepted.get(encoding) ?? accepted.get('*');
    if (q !== undefined && q > 0) return encoding;
  }
  return null;
}

/** Gzipped pages by the SHA-256 of their bytes; GraphiQL is the only HTML, so a few suffice. */
const gzippedPages = new Map<string, Promise<Buffer>>();
const MAX_GZIPPED_PAGES = 4;

async function gzippedPage(response: Response): Promise<{ body: Buffer; headers: Headers }> {
  const html = Buffer.from(await response.arrayBuffer());
  const key = createHash('sha256').update(html).digest('hex');
  let body = gzippedPages.get(key);
  if (!body) {
    if (gzippedPages.size >= MAX_GZIPPED_PAGES) gzippedPages.clear();
    body = gzip(html);
    gzippedPages.set(key, body);
  }
  const headers = new Headers(response.headers);
  headers.set('content-encoding', 'gzip');
  headers.set('content-length', String((await body).length));
  headers.append('vary', 'Accept-Encoding');
  return { body: await body, headers };
}

export function useResponseCompression(): Plugin {
  const { onResponse } = useContentEncoding();
  return {
    onResponse(payload) {
      const { request, response } = payload;
      if (response.headers.has('content-encoding')) return;
      const type = response.headers.get('content-type') ?? '';
      if (STREAMING.test(type)) return;
      if (!(Number(response.headers.get('content-length')) >= MIN_BYTES)) return;
      const encoding = chooseEncoding(request.headers.get('accept-encoding'));
      if (!encoding) return;
      if (encoding === 'gzip' && /^text\/html/i.test(type)) {
        return gzippedPage(response).then(({ body, headers }) =>
          payload.setResponse(
            new payload.fetchAPI.Response(new Uint8Array(body), {
              status: response.status,
              headers,
            }),
          ),
        );
      }
      // The library takes the first listed encoding it supports: hand it exactly our choice.
      const negotiated = { headers: new Headers({ 'accept-encoding': encoding }) } as Request;
      return onResponse?.({ ...payload, request: negotiated } as never);
    },
  };
}

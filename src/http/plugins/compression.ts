/**
 * Compressed answers for clients that ask (`Accept-Encoding: gzip` or `deflate`): the
 * compression itself is @whatwg-node/server's useContentEncoding; the policy is ours:
 * - only whole answers of at least MIN_BYTES (a small answer costs more to compress than to send);
 * - never a stream (SSE, multipart @defer parts): a compressor holds bytes back until its block
 *   fills, which would delay live events and deferred parts;
 * - gzip, else deflate; not br: Node's brotli defaults to quality 11, several times gzip's CPU
 *   per byte, which any client could ask for on the 9 MB GraphiQL page;
 * - request bodies are not decompressed (the body limit counts what arrives on the wire);
 * - HTML (the 9 MB GraphiQL page, the same bytes every visit) is compressed once per encoding
 *   (gzip and deflate alike) and kept: doing it per visit costs ~200 ms of CPU each time;
 * - every answer that could have been compressed says `Vary: Accept-Encoding`, the plain one
 *   too: a shared cache must not hand a gzipped answer to a client that did not ask for it, nor
 *   keep serving the plain one to every client after one that did not ask.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { deflate as deflateCallback, gzip as gzipCallback } from 'node:zlib';
import { useContentEncoding } from '@whatwg-node/server';
import type { Plugin } from 'graphql-yoga';
import { appendVary } from '../vary.js';

const COMPRESS = { gzip: promisify(gzipCallback), deflate: promisify(deflateCallback) };

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

/**
 * Compressed pages by encoding and the SHA-256 of their bytes; GraphiQL is the only HTML, so a
 * few suffice.
 */
const compressedPages = new Map<string, Promise<Buffer>>();
const MAX_COMPRESSED_PAGES = 4;

async function compressedPage(
  response: Response,
  encoding: (typeof OFFERED)[number],
): Promise<{ body: Buffer; headers: Headers }> {
  const html = Buffer.from(await response.arrayBuffer());
  const key = `${encoding}:${createHash('sha256').update(html).digest('hex')}`;
  let body = compressedPages.get(key);
  if (!body) {
    if (compressedPages.size >= MAX_COMPRESSED_PAGES) compressedPages.clear();
    body = COMPRESS[encoding](html);
    compressedPages.set(key, body);
  }
  const headers = new Headers(response.headers);
  headers.set('content-encoding', encoding);
  headers.set('content-length', String((await body).length));
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
      appendVary(response.headers, 'Accept-Encoding');
      const encoding = chooseEncoding(request.headers.get('accept-encoding'));
      if (!encoding) return;
      if (/^text\/html/i.test(type)) {
        return compressedPage(response, encoding).then(({ body, headers }) =>
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

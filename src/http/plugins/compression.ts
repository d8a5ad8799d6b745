/**
 * Compressed answers for clients that ask (`Accept-Encoding: gzip` or `deflate`): the
 * compression itself is @whatwg-node/server's useContentEncoding; the policy is ours:
 * - only whole answers of at least MIN_BYTES (a small answer costs more to compress than to send);
 * - never a stream (SSE, multipart @defer parts): a compressor holds bytes back until its block
 *   fills, which would delay live events and deferred parts;
 * - gzip, else deflate; not br: Node's brotli defaults to quality 11, several times gzip's CPU
 *   per byte;
 * - request bodies are not decompressed (the body limit counts what arrives on the wire);
 * - never a response with an ETag: a static file (GraphiQL, src/http/graphiql.ts) whose encodings
 *   were prepared once; compressing its megabytes again per request is what that avoids;
 * - every answer that could have been compressed says `Vary: Accept-Encoding`, the plain one
 *   too: a shared cache must not hand a gzipped answer to a client that did not ask for it, nor
 *   keep serving the plain one to every client after one that did not ask.
 */
import { useContentEncoding } from '@whatwg-node/server';
import type { Plugin } from 'graphql-yoga';
import { appendVary } from '../vary.js';

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

export function useResponseCompression(): Plugin {
  const { onResponse } = useContentEncoding();
  return {
    onResponse(payload) {
      const { request, response } = payload;
      if (response.headers.has('content-encoding') || response.headers.has('etag')) return;
      const type = response.headers.get('content-type') ?? '';
      if (STREAMING.test(type)) return;
      if (!(Number(response.headers.get('content-length')) >= MIN_BYTES)) return;
      appendVary(response.headers, 'Accept-Encoding');
      const encoding = chooseEncoding(request.headers.get('accept-encoding'));
      if (!encoding) return;
      // The library takes the first listed encoding it supports: hand it exactly our choice.
      const negotiated = { headers: new Headers({ 'accept-encoding': encoding }) } as Request;
      return onResponse?.({ ...payload, request: negotiated } as never);
    },
  };
}

/**
 * @whatwg-node/server's useContentEncoding for whole answers of MIN_COMPRESSED_BYTES or more: not
 * a stream (a compressor holds bytes back) nor an ETagged (precompressed) GraphiQL file.
 */
import { useContentEncoding } from '@whatwg-node/server';
import type { Plugin } from 'graphql-yoga';
import { appendVary } from '../vary.js';

export const MIN_COMPRESSED_BYTES = 1024;
const STREAMING = /^(text\/event-stream|multipart\/mixed)/i;
/** Not br: Node's brotli defaults to quality 11, several times gzip's CPU per byte. */
export const COMPRESSED_ENCODINGS = ['gzip', 'deflate'] as const;

/** The first of `offered` the client accepts (q > 0), or null. */
export function chooseEncoding<T extends string>(
  acceptEncoding: string | null,
  offered: readonly T[],
): T | null {
  if (!acceptEncoding) return null;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(name ?? '', q ? Number(q.slice(2)) : 1);
  }
  for (const encoding of offered) {
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
      if (!(Number(response.headers.get('content-length')) >= MIN_COMPRESSED_BYTES)) return;
      appendVary(response.headers, 'Accept-Encoding');
      const encoding = chooseEncoding(request.headers.get('accept-encoding'), COMPRESSED_ENCODINGS);
      if (!encoding) return;
      // The library takes the first listed encoding it supports: hand it exactly our choice.
      const negotiated = { headers: new Headers({ 'accept-encoding': encoding }) } as Request;
      return onResponse?.({ ...payload, request: negotiated } as never);
    },
  };
}

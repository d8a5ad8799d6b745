/**
 * The body size limit without yoga's `maxRequestBodySize` (a TransformStream: a quarter of a small
 * query's time). A Content-Length is only checked (Node ends the body there); chunked is read.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../../core/errors.js';

const CONTENT_LENGTH = /^\d+$/;

function tooLarge(): Error {
  return createGraphQLError('Request body too large', {
    extensions: { http: { status: 413 }, code: ErrorCode.RequestEntityTooLarge },
  });
}

/** `limit` in bytes (MAX_BODY_BYTES). */
export function useRequestBodyLimit(limit: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const contentLength = request.headers.get('content-length');
      if (contentLength !== null) {
        // Only one non-negative integer is valid; a comma-joined pair is a smuggling attempt.
        if (!CONTENT_LENGTH.test(contentLength)) {
          throw createGraphQLError('Content-Length header is invalid.', {
            extensions: { http: { status: 400 }, code: ErrorCode.BadRequest },
          });
        }
        if (Number(contentLength) > limit) throw tooLarge();
        return;
      }
      if (requestParser === undefined || request.body === null) return;
      setRequestParser(async (req) => {
        const body = await readUpTo(req, limit);
        return requestParser(
          new fetchAPI.Request(req.url, {
            method: req.method,
            headers: req.headers,
            body,
            signal: req.signal,
          }),
        );
      });
    },
  };
}

async function readUpTo(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  if (!reader) return new Uint8Array(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

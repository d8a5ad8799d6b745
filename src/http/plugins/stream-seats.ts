/**
 * A stream (SSE, @defer) holds no admission seat once its head is out: its Release (the server
 * context's `admitted`, src/traffic/admitted-requests.ts) is called as its Response leaves yoga.
 * The seat is freed once, so the call at the response's close charges nothing again; the
 * plain-query lane never streams.
 */
import type { Plugin } from 'graphql-yoga';
import type { Ticketed } from '../../traffic/ticket.js';

const STREAMS = /^(text\/event-stream|multipart\/)/;

export function useStreamSeats(): Plugin<object, Ticketed> {
  return {
    onResponse({ response, serverContext }) {
      if (STREAMS.test(response.headers.get('content-type') ?? '')) serverContext.admitted?.();
    },
  };
}

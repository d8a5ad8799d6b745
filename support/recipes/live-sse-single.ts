// graphql-sse's "single connection" mode: one event stream per client, however many
// subscriptions it runs (a browser keeps at most six HTTP/1.1 connections per origin). The
// client reserves the stream (PUT), opens it (GET) and sends each operation (POST) with the
// same headers: the gateway refuses any of them whose credentials differ from the reservation's.
// On shutdown a copy ends the stream; the client reserves a new one and resends each request
// object, so watchOverSse (live-sse) keeps the latest resume token in its variables here too.
import { createClient, type Client } from 'graphql-sse';

export function createLiveSseSingleClient(url: string, authorization: string): Client<true> {
  return createClient({
    url,
    singleConnection: true,
    headers: { Authorization: authorization },
    retryAttempts: 10,
    // 0.25-0.75 s, then doubling up to 8 s; the jitter spreads a rollout's reconnects.
    retry: (retries) =>
      new Promise((resolve) =>
        setTimeout(resolve, Math.min(500 * 2 ** retries, 8_000) * (0.5 + Math.random())),
      ),
  });
}

/**
 * A graphql-sse reservation (PUT) that is never opened is dropped after its time to live: its
 * token is then unknown, and it no longer counts against the credentials' streams. Run through a
 * real yoga with the plugin, on a short time to live (the product's is RESERVATION_TTL_MS).
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { TOKEN_HEADER_KEY } from 'graphql-sse';
import { describe, expect, it } from 'vitest';
import { Identities } from '../../../src/core/identity.js';
import { useSseSingleConnection } from '../../../src/http/plugins/sse-single-connection.js';
import { HeldStreams } from '../../../src/traffic/held-streams.js';
import { issueTicket } from '../../../src/traffic/ticket.js';
import { untilAsync } from '../../../support/wait.js';

const AUTHORIZATION = `Basic ${Buffer.from('AC-ttl:token-ttl').toString('base64')}`;
const URL = 'http://gateway.test/graphql';

function gatewayWithTtl(reservationTtlMs: number) {
  return createYoga({
    schema: createSchema({ typeDefs: 'type Query { ok: Boolean }', resolvers: {} }),
    logging: false,
    plugins: [
      useSseSingleConnection({
        held: new HeldStreams(10, 1),
        verify: () => Promise.resolve(true),
        maxOperationsPerStream: 5,
        reservationTtlMs,
        live: null,
      }),
    ],
  });
}

const identities = new Identities(null);

/** A request as the gateway hands it to yoga: with the ticket its edge issued (ticket.ts). */
const send = (
  yoga: ReturnType<typeof gatewayWithTtl>,
  headers: Record<string, string>,
  method = 'GET',
) =>
  yoga.fetch(URL, { method, headers }, { ticket: issueTicket(identities, new Headers(headers)) });

const reserve = (yoga: ReturnType<typeof gatewayWithTtl>) =>
  send(yoga, { authorization: AUTHORIZATION }, 'PUT');

/** Opens the stream a reservation's token names. */
const open = (yoga: ReturnType<typeof gatewayWithTtl>, token: string) =>
  send(yoga, {
    accept: 'text/event-stream',
    [TOKEN_HEADER_KEY]: token,
    authorization: AUTHORIZATION,
  });

describe('an unopened graphql-sse reservation', () => {
  it('is dropped after its time to live, freeing its place', async () => {
    const yoga = gatewayWithTtl(200);
    const first = await reserve(yoga);
    expect(first.status).toBe(201);
    const token = await first.text();
    // One stream per credentials: a second reservation is refused while the first lives.
    expect((await reserve(yoga)).status).toBe(429);

    // Once it has expired, its place is free again...
    let second: Response | undefined;
    await untilAsync(async () => {
      second = await reserve(yoga);
      return second.status === 201;
    }, 15_000);
    expect(await second!.text()).not.toBe(token);
    // ...and its token opens nothing.
    expect((await open(yoga, token)).status).toBe(404);
  });

  it('is kept while it lives', async () => {
    const yoga = gatewayWithTtl(60_000);
    const token = await (await reserve(yoga)).text();
    const opened = await open(yoga, token);
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
  });
});

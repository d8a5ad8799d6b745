/**
 * A request its ticket says admission refused is answered 429 with Retry-After and
 * RATE_LIMITED, before its body is read or anything runs; the reason names which bound it hit.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useAdmissionRefusals } from '../../../src/http/plugins/admission-refusals.js';
import type { Refusal } from '../../../src/traffic/fair-admission.js';
import type { Ticket, Ticketed } from '../../../src/traffic/ticket.js';

let ran = 0;
const yoga = createYoga<Ticketed>({
  schema: createSchema({
    typeDefs: 'type Query { hello: String }',
    resolvers: { Query: { hello: () => ((ran += 1), 'hi') } },
  }),
  plugins: [useAdmissionRefusals()],
  logging: false,
});

const ticket = (refusal?: Refusal): Ticket => ({
  identity: { kind: 'missing' },
  arrivedAt: 0,
  waitedMs: 0,
  ...(refusal ? { refusal } : {}),
});

const ask = (refusal?: Refusal) =>
  yoga.fetch(
    'http://gateway.test/graphql',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ hello }' }),
    },
    { ticket: ticket(refusal) },
  );

describe('useAdmissionRefusals', () => {
  it('answers a refused request 429 with Retry-After and RATE_LIMITED, running nothing', async () => {
    ran = 0;
    for (const [refused, why] of [
      ['line-full', /most requests waiting/],
      ['waited-too-long', /waited its turn for too long/],
    ] as const) {
      const response = await ask({ refused, retryAfterSeconds: 2 });
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('2');
      const body = (await response.json()) as {
        errors: { message: string; extensions: { code: string; retryAfter: number } }[];
      };
      expect(body.errors[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 2 });
      expect(body.errors[0]?.message).toMatch(why);
    }
    expect(ran).toBe(0);
  });

  it('lets an admitted request through', async () => {
    const response = await ask();
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { hello: 'hi' } });
  });
});

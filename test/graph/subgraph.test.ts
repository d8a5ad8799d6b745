/**
 * The federation subgraph protocol, in-process: `_service { sdl }` is the checked-in SDL, and
 * `_entities` resolves any number of Number references from the request's one owned-numbers call.
 * (These operations are not in the typed set: they belong to the federation protocol.)
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS, SECOND_DEMO_ACCOUNT } from '../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../fixtures/harness.js';
import { schema } from '../../src/graph/schema.js';

const ENTITIES_QUERY = `
  query Entities($representations: [_Any!]!) {
    _entities(representations: $representations) {
      __typename
      ... on Number {
        tid
        number
        type
      }
    }
  }
`;

interface NumberEntity {
  readonly __typename: 'Number';
  readonly tid: string;
  readonly number: string;
  readonly type: string;
}

const stack = sharedStack({}, {}, { resetCalls: true });

describe('_service', () => {
  it('serves the checked-in schema.graphql as its SDL, without credentials', async () => {
    const { body } = await executeText<{ _service: { sdl: string } }>(
      stack.gateway,
      '{ _service { sdl } }',
    );
    expect(body.errors).toBeUndefined();
    const sdl = body.data?._service.sdl ?? '';
    expect(`${sdl.trimEnd()}\n`).toBe(
      await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8'),
    );
    expect(sdl).toMatch(
      /^type Number implements Node\s+@key\(fields: "tid"\)\s+@key\(fields: "number"\)/m,
    );
    expect(sdl).toContain('@link(url: "https://specs.apollo.dev/federation/v2.9"');
    // The list sizes routers read for demand control (docs/federation.md).
    expect(sdl).toContain('): [Number!] @listSize(assumedSize: 200)');
    expect(stack.simulator.calls).toEqual([]);
  });
});

describe('_entities', () => {
  it('resolves 50 Number representations with one upstream call; unknown tids are null', async () => {
    const owned = DEMO_ACCOUNT.numbers;
    // The demo account's tids, repeated, mixed with a tid nobody owns and another account's tid.
    const notOwned = ['TN-NONE-0001', SECOND_DEMO_ACCOUNT.numbers[0]?.tid ?? 'TN2-L-0001'];
    const pool = [...owned.map((n) => n.tid), ...notOwned];
    const tids = Array.from({ length: 50 }, (_, i) => pool[(i * 5) % pool.length] ?? '');
    expect(new Set(tids)).toEqual(new Set(pool));

    const { status, body } = await executeText<{ _entities: (NumberEntity | null)[] }>(
      stack.gateway,
      ENTITIES_QUERY,
      { representations: tids.map((tid) => ({ __typename: 'Number', tid })) },
      basicAuth(DEMO_CREDENTIALS),
    );

    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual(
      tids.map((tid) => {
        const n = owned.find((o) => o.tid === tid);
        return n
          ? { __typename: 'Number', tid, number: n.number, type: n.type.toUpperCase() }
          : null;
      }),
    );
    expect(
      stack.simulator.calls.map((c) => ({ operation: c.operation, account: c.accountSysId })),
    ).toEqual([{ operation: 'allownednumbers', account: DEMO_CREDENTIALS.sysId }]);
  });

  it('fails with UNAUTHENTICATED and calls nothing without credentials', async () => {
    const tids = DEMO_ACCOUNT.numbers.slice(0, 3).map((n) => n.tid);
    const { body } = await executeText(stack.gateway, ENTITIES_QUERY, {
      representations: tids.map((tid) => ({ __typename: 'Number', tid })),
    });
    // `_entities` is non-null, so the refusal nulls the whole answer; a router maps it to each
    // reference's path (test/e2e/federation-router.test.ts).
    expect(body.data).toBeNull();
    expect(body.errors?.map((e) => ({ path: e.path, code: e.extensions?.code }))).toEqual([
      { path: ['_entities'], code: 'UNAUTHENTICATED' },
    ]);
    expect(stack.simulator.calls).toEqual([]);
  });

  it('resolves Number by its second key, the phone number, from the same one call', async () => {
    const [mine, other] = DEMO_ACCOUNT.numbers;
    const theirs = SECOND_DEMO_ACCOUNT.numbers[0]?.number ?? '';
    const representations = [mine?.number, theirs, other?.number, '+0 000 000'].map((number) => ({
      __typename: 'Number',
      number,
    }));
    const { body } = await executeText<{ _entities: (NumberEntity | null)[] }>(
      stack.gateway,
      ENTITIES_QUERY,
      { representations },
      basicAuth(DEMO_CREDENTIALS),
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities.map((e) => e?.tid ?? null)).toEqual([
      mine?.tid,
      null,
      other?.tid,
      null,
    ]);
    expect(stack.simulator.calls.map((c) => c.operation)).toEqual(['allownednumbers']);
  });

  it("resolves a recent Message by its id; another account's message is null", async () => {
    const mine = DEMO_ACCOUNT.numbers[0]?.messages[0];
    const theirs = SECOND_DEMO_ACCOUNT.numbers[0]?.messages[0];
    const { body } = await executeText<{ _entities: ({ id: string; body: string } | null)[] }>(
      stack.gateway,
      `query Entities($representations: [_Any!]!) {
        _entities(representations: $representations) { ... on Message { id body } }
      }`,
      {
        representations: [mine, theirs].map((m) => ({ __typename: 'Message', id: m?.message_id })),
      },
      basicAuth(DEMO_CREDENTIALS),
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([{ id: mine?.message_id, body: mine?.body }, null]);
  });
});

describe('the protocol fields in an explorer', () => {
  it('say they are for a router, and what a frontend uses instead', () => {
    const fields = schema.getQueryType()?.getFields() ?? {};
    expect(fields._entities?.description).toMatch(/federation router.*use `nodes`/);
    expect(fields._service?.description).toMatch(/federation router.*no use for it/);
  });
});

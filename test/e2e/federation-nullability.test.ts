/**
 * The nullability rule of docs/federation.md, through a real router: without credentials every
 * field of this subgraph is `null` with UNAUTHENTICATED, and each `null` climbs to the nearest
 * nullable position. The contacts subgraph's fields stay intact only while that position is the
 * selected field of this subgraph or the reference to it; otherwise the contact, or the whole
 * answer, goes with it. The same contacts subgraph, typed three ways, behind the same router set-up.
 */
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import {
  CONTACTS,
  CONTACTS_SDL,
  composeWithContacts,
  listenOnLoopback,
  startContactsSubgraph,
  startRouter,
  type RunningHttpServer,
} from '../fixtures/federation.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';

let simulator: RecordingUpstream;
let gateway: TestGateway;
let sms: RunningHttpServer;

beforeAll(async () => {
  simulator = await startRecordingUpstream();
  gateway = createTestGateway(simulator.url);
  sms = await listenOnLoopback((req, res) => void gateway.gateway(req, res));
});

afterAll(async () => {
  await sms?.close();
  await gateway?.close();
  await simulator?.close();
});

/** The contacts subgraph's SDL with `Contact.number` and the list's items typed as given. */
function contactsTyped(reference: 'Number' | 'Number!', items: 'Contact' | 'Contact!'): string {
  const sdl = CONTACTS_SDL.replace(/number: Number\n/, `number: ${reference}\n`).replace(
    /contacts: \[Contact!\]!(\s+\})/,
    `contacts: [${items}]!$1`,
  );
  // The replacements took: a test of the wrong SDL would prove nothing.
  expect(sdl).toContain(`number: ${reference}\n`);
  expect(sdl).toMatch(new RegExp(`contacts: \\[${items.replace('!', '\\!')}\\]!\\s+\\}`));
  return sdl;
}

/** Asks a router over this gateway and a contacts subgraph typed by `sdl`, without credentials. */
async function withoutCredentials(sdl: string, query: string) {
  const typeDefs = parse(sdl);
  const contacts = await startContactsSubgraph(typeDefs);
  try {
    const composed = await composeWithContacts({ sms: sms.url, contacts: contacts.url }, typeDefs);
    if (!composed.supergraphSdl) {
      throw new Error(`composition failed: ${composed.errors?.map((e) => e.message).join('; ')}`);
    }
    const router = await startRouter(composed.supergraphSdl);
    try {
      const response = await fetch(router.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query }),
      });
      const body = (await response.json()) as {
        data?: unknown;
        errors?: { path?: (string | number)[]; extensions?: { code?: string } }[];
      };
      return {
        data: body.data,
        codes: [...new Set(body.errors?.map((e) => e.extensions?.code))],
      };
    } finally {
      await router.close();
    }
  } finally {
    await contacts.close();
  }
}

/** `number: String!` is non-null in this subgraph; `webhook: String` is nullable. */
const NON_NULL_FIELD = '{ contacts { name number { tid number } } }';
const NULLABLE_FIELD = '{ contacts { name number { tid webhook } } }';

describe('without credentials, through a router', () => {
  it('a nullable reference (number: Number) stops the null: the contacts stay intact', async () => {
    const { data, codes } = await withoutCredentials(
      contactsTyped('Number', 'Contact!'),
      NON_NULL_FIELD,
    );
    expect(data).toEqual({ contacts: CONTACTS.map((c) => ({ name: c.name, number: null })) });
    expect(codes).toEqual(['UNAUTHENTICATED']);
  });

  it('a nullable field of this subgraph (webhook) is null on its own, whatever the reference', async () => {
    const { data, codes } = await withoutCredentials(
      contactsTyped('Number!', 'Contact!'),
      NULLABLE_FIELD,
    );
    expect(data).toEqual({
      contacts: CONTACTS.map((c) => ({ name: c.name, number: { tid: c.tid, webhook: null } })),
    });
    expect(codes).toEqual(['UNAUTHENTICATED']);
  });

  it('number: String! under number: Number! in [Contact!]!: the whole answer is data: null', async () => {
    const { data, codes } = await withoutCredentials(
      contactsTyped('Number!', 'Contact!'),
      NON_NULL_FIELD,
    );
    expect(data).toBeNull();
    expect(codes).toEqual(['UNAUTHENTICATED']);
  });

  it('number: String! under number: Number! in [Contact]!: each contact is null, names and all', async () => {
    const { data, codes } = await withoutCredentials(
      contactsTyped('Number!', 'Contact'),
      NON_NULL_FIELD,
    );
    expect(data).toEqual({ contacts: CONTACTS.map(() => null) });
    expect(codes).toEqual(['UNAUTHENTICATED']);
  });

  it('selecting only the key (tid) asks nothing of this subgraph: intact however typed', async () => {
    simulator.resetCalls();
    const { data, codes } = await withoutCredentials(
      contactsTyped('Number!', 'Contact!'),
      '{ contacts { name number { tid } } }',
    );
    expect(data).toEqual({
      contacts: CONTACTS.map((c) => ({ name: c.name, number: { tid: c.tid } })),
    });
    expect(codes).toEqual([]);
    expect(simulator.calls).toEqual([]);
  });
});

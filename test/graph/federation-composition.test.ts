/**
 * Composition: the checked-in schema.graphql composes with a second subgraph that extends
 * Number (test/fixtures/federation.ts) into a supergraph, with no composition error.
 */
import { composeServices } from '@theguild/federation-composition';
import { parse, print, type DocumentNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeWithContacts, CONTACTS_SDL, readSmsSubgraphSdl } from '../fixtures/federation.js';

const urls = { sms: 'http://127.0.0.1:1/graphql', contacts: 'http://127.0.0.1:2/graphql' };

describe('composition', () => {
  it('composes this subgraph with a contacts subgraph that adds a field to Number', async () => {
    const result = await composeWithContacts(urls);
    expect(result.errors).toBeUndefined();
    const supergraph = result.supergraphSdl ?? '';
    // Both subgraphs know Number by the same key; each contributes its own fields.
    expect(supergraph).toContain(
      'type Number implements Node @join__type(graph: CONTACTS, key: "tid") @join__type(graph: SMS, key: "tid")',
    );
    expect(supergraph).toContain('contacts: [Contact!]! @join__field(graph: CONTACTS)');
    expect(supergraph).toMatch(/history\([\s\S]*?\): History @join__field\(graph: SMS\)/);
    expect(supergraph).toContain(`SMS @join__graph(name: "sms", url: "${urls.sms}")`);
    expect(supergraph).toContain(
      `CONTACTS @join__graph(name: "contacts", url: "${urls.contacts}")`,
    );
  });

  it('reports an error when a subgraph disagrees on the key field', async () => {
    // The same contacts subgraph with `tid: Int!`: the check above is able to fail.
    const conflicting = parse(CONTACTS_SDL.replace('tid: ID!', 'tid: Int!'));
    const result = await composeWithContacts(urls, conflicting);
    expect(result.errors?.map((e) => e.extensions.code)).toContain('FIELD_TYPE_MISMATCH');
  });

  it('composes with a subgraph that defines the value type MessageStatus too (@shareable)', async () => {
    const delivery = parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@shareable"])
      type Query { lastDeliveryStatus: MessageStatus }
      type MessageStatus @shareable { code: Int  text: String!  ok: Boolean!  raw: String! }
    `);
    const compose = (sms: DocumentNode) =>
      composeServices([
        { name: 'sms', typeDefs: sms, url: urls.sms },
        { name: 'delivery', typeDefs: delivery, url: 'http://127.0.0.1:3/graphql' },
      ]);
    const result = compose(await readSmsSubgraphSdl());
    expect(result.errors).toBeUndefined();
    expect(result.supergraphSdl).toMatch(
      /type MessageStatus @join__type\(graph: DELIVERY\) @join__type\(graph: SMS\)/,
    );
    // Without @shareable on this side the same pair does not compose: the marker is what counts.
    const unshared = parse(
      print(await readSmsSubgraphSdl()).replace(/(type MessageStatus)\s+@shareable/, '$1'),
    );
    const failed = compose(unshared);
    expect(failed.errors?.map((e) => e.extensions.code)).toContain('INVALID_FIELD_SHARING');
  });

  it('composes with a contacts subgraph that knows Number by its phone number', async () => {
    const byPhone = parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])
      type Query { phoneBook: [Entry!]! }
      type Entry { name: String!  number: Number }
      type Number @key(fields: "number") { number: String!  entries: [Entry!]! }
    `);
    const result = await composeWithContacts(urls, byPhone);
    expect(result.errors).toBeUndefined();
    expect(result.supergraphSdl).toContain(
      '@join__type(graph: CONTACTS, key: "number") @join__type(graph: SMS, key: "tid") @join__type(graph: SMS, key: "number")',
    );
  });

  it('keeps the contract tags and the Message key in the supergraph', async () => {
    const result = await composeWithContacts(urls);
    const supergraph = result.supergraphSdl ?? '';
    expect(supergraph).toMatch(
      /webhook: String @join__field\(graph: SMS\) @tag\(name: "internal"\)|webhook: String @tag\(name: "internal"\)/,
    );
    expect(supergraph).toMatch(/raw: String!.*@tag\(name: "internal"\)/);
    expect(supergraph).toMatch(/type Message implements Node @join__type\(graph: SMS, key: "id"\)/);
  });
});

/**
 * Composition: the checked-in schema.graphql composes with a second subgraph that extends
 * Number (test/helpers/federation.ts) into a supergraph, with no composition error.
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeWithContacts, CONTACTS_SDL } from './helpers/federation.js';

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
});

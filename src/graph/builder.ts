/** The one SchemaBuilder. Types live in the files beside this one; src/graph/schema.ts builds. */
import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import type { GatewayContext } from './context.js';
import { NODES_LIST_SIZE } from './cost.js';
import { decodeGlobalId, encodeGlobalId } from './global-ids.js';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  Scalars: { DateTime: { Input: Date; Output: Date } };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  // Federation must come after plugins that wrap resolvers; directives is its prerequisite.
  plugins: [RelayPlugin, DirectivesPlugin, FederationPlugin],
  defaultFieldNullability: false,
  relay: {
    encodeGlobalID: encodeGlobalId,
    decodeGlobalID: decodeGlobalId,
    nodeTypeOptions: {
      description: 'An object with a global id, refetchable with `Query.node` (Relay).',
    },
    idFieldOptions: { description: 'Global id: unique across types and accounts.' },
    nodeQueryOptions: {
      description:
        "The Number or Message with this global id, read with the caller's credentials: null " +
        "for another account's id, or a message older than the newest 100 of its number.",
      args: { id: { description: 'A global id, as a Number or Message `id` field gave it.' } },
    },
    nodesQueryOptions: {
      description: 'Several `node` lookups at once, in order; null where `node` would be.',
      listSize: NODES_LIST_SIZE,
      args: { ids: { description: 'Global ids, as `id` fields gave them.' } },
    },
    cursorType: 'String',
    edgesFieldOptions: { nullable: false, description: 'The items of this page, in order.' },
    nodeFieldOptions: { nullable: false, description: 'The item itself.' },
    cursorFieldOptions: {
      description: 'Opaque cursor naming this item: pass it as `after` or `before` unchanged.',
    },
    pageInfoFieldOptions: { description: 'Where this page sits in the whole list.' },
    pageInfoTypeOptions: {
      description: 'Where a page sits in the whole list (Relay PageInfo).',
      // Every Relay-style subgraph defines PageInfo; in one supergraph they must share it.
      shareable: true,
    },
    hasNextPageFieldOptions: { description: 'True when items follow this page (older ones).' },
    hasPreviousPageFieldOptions: {
      description: 'True when items precede this page (newer ones).',
    },
    startCursorFieldOptions: { description: "The first edge's cursor; null for an empty page." },
    endCursorFieldOptions: { description: "The last edge's cursor; null for an empty page." },
    firstArgOptions: { description: 'Page forward: at most this many items after `after`.' },
    afterArgOptions: { description: 'Start after the item this cursor names.' },
    lastArgOptions: { description: 'Page backward: at most this many items before `before`.' },
    beforeArgOptions: { description: 'End before the item this cursor names.' },
  },
});

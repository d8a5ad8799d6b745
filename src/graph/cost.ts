/**
 * What each field costs in upstream calls, for the static cost limit (MAX_QUERY_COST, enforced by
 * src/http/plugins/query-limits.ts). Set on every field that calls the service; everything else costs
 * nothing. A list's length is unknown before execution, so the per-request call budget
 * (src/upstream/loaders.ts) backs this up at run time.
 */

/** One upstream call per occurrence (a number list, one history window). */
export const UPSTREAM_CALL_COST = { complexity: 1 } as const;

/** A lookup reads the owned numbers, and for messages one history window per number. */
export const NODE_LOOKUP_COST = { complexity: 2 } as const;

/**
 * Number.messages: a first page from the head is one window; a page after or before a cursor, or
 * the oldest page, may take a second one (history moved, total unknown).
 */
export function messagesCost({ args }: { args: Record<string, unknown> }): number {
  const plain = args.after == null && args.before == null && args.last == null;
  return plain ? 1 : 2;
}

/**
 * `nodes(ids:)` and `_entities(representations:)`: one unit, plus one per IDS_PER_COST_UNIT ids.
 * Their lookups share the request's upstream calls (one owned-numbers list, one history window
 * per number), but each id still costs the gateway its own work, so a list is never as cheap as
 * one id; MAX_NODE_IDS caps it outright (list-lookups.ts).
 */
export const IDS_PER_COST_UNIT = 10;

export function listLookupCost(count: number): number {
  return 1 + Math.ceil(count / IDS_PER_COST_UNIT);
}

/**
 * Fields whose cost depends on their arguments (above): a document that gives any of them a
 * variable costs what its variables say, so its cost is worked out per request, never cached
 * per document (src/http/plugins/query-limits.ts).
 */
export const FIELDS_COSTED_BY_ARGUMENTS: ReadonlySet<string> = new Set([
  'messages',
  'nodes',
  '_entities',
]);

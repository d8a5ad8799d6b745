/**
 * What each field costs, said once, in the schema, as the IBM cost directives that federated
 * routers read for demand control (`@listSize`, `@cost`, from https://specs.apollo.dev/cost/v0.1,
 * imported through the federation link): a router in front and the gateway's own estimate
 * (estimate-cost.ts, enforced as MAX_QUERY_COST by src/http/plugins/query-limits.ts) read the
 * same figures. The unit is the item: every object an answer holds (a Number, a History, a
 * Message, an edge) costs 1, a scalar 0, and a list multiplies what each of its items costs by
 * its size. docs/limits.md "Cost" says how the router's reading and the gateway's differ.
 */
import type { GatewayLimits } from '../config/config.js';
import { FIXED_MAX_NODE_IDS } from '../config/fixed.js';
import { DEFAULT_PAGE_SIZE, maxPageSize } from './paging.js';

/**
 * How many numbers `ownedNumbers` is assumed to list: the list has no size argument, and an
 * account's count is only known once it is read. 200 is the largest account the benches and the
 * attacks measure; a smaller account is charged as if it had 200.
 */
export const ASSUMED_NUMBERS_PER_ACCOUNT = 200;

/**
 * `nodes(ids:)` as a router sees it: the most ids it may carry. Routers only slice by Int
 * arguments, so they cannot count the ids; the gateway counts every one (listArgument, below).
 */
export const ASSUMED_NODE_IDS = FIXED_MAX_NODE_IDS;

/** The `@listSize` arguments, as @pothos/plugin-federation takes them. */
export interface ListSize {
  readonly assumedSize?: number;
  readonly slicingArguments?: string[];
  readonly sizedFields?: string[];
  readonly requireOneSlicingArgument?: boolean;
}

export const OWNED_NUMBERS_LIST_SIZE: ListSize = { assumedSize: ASSUMED_NUMBERS_PER_ACCOUNT };

/**
 * `history(start, end)`: `messages` holds at most `end` items in a router's reading (its one
 * slicing argument); the gateway subtracts `start` (HISTORY_RANGE_START) and counts `end - start`.
 */
export const HISTORY_LIST_SIZE: ListSize = { slicingArguments: ['end'], sizedFields: ['messages'] };

/** `messages(first | last)`: a page of `edges`, DEFAULT_PAGE_SIZE when neither is given. */
export const MESSAGES_LIST_SIZE: ListSize = {
  assumedSize: DEFAULT_PAGE_SIZE,
  slicingArguments: ['first', 'last'],
  sizedFields: ['edges'],
  requireOneSlicingArgument: false,
};

export const NODES_LIST_SIZE: ListSize = { assumedSize: ASSUMED_NODE_IDS };

/** The limits list arguments are refused by (BAD_USER_INPUT, in the resolvers). */
export type SizeLimits = Pick<GatewayLimits, 'maxHistoryRange' | 'maxNodeIds'>;

/**
 * What the gateway knows beyond the directives, kept in the field's `extensions` beside them
 * (never printed, so routers do not see it):
 * - `costRangeStart`: the slicing argument is the end of a range that begins at this argument;
 *   the size is their difference (history's `start`).
 * - `costListArgument`: the size is the length of this list argument, repeated entries
 *   included (`nodes(ids:)`, `_entities(representations:)`).
 * - `costMaxSize`: the most items the arguments may ask for; past it the resolver refuses them
 *   (BAD_USER_INPUT, naming the argument) before any call, so the estimate counts at most this.
 */
export interface CostExtensions {
  readonly costRangeStart?: string;
  readonly costListArgument?: string;
  readonly costMaxSize?: (limits: SizeLimits) => number;
}

export const HISTORY_COST = {
  costRangeStart: 'start',
  costMaxSize: (limits: SizeLimits) => limits.maxHistoryRange,
} as const satisfies CostExtensions;

export const MESSAGES_COST = { costMaxSize: maxPageSize } as const satisfies CostExtensions;

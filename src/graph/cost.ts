/**
 * What each field costs, said once as `@listSize`, which routers and the gateway's own estimate
 * (estimate-cost.ts, MAX_QUERY_COST) both read. In items: an object costs 1, a scalar 0, and a
 * list its items' cost times its size. docs/limits.md "Cost" has how the two readings differ.
 */
import type { GatewayLimits } from '../config/config.js';
import { FIXED_MAX_NODE_IDS } from '../config/fixed.js';
import { DEFAULT_PAGE_SIZE, maxPageSize } from './paging.js';

/** The numbers `ownedNumbers` (no size argument) is assumed to list: the largest account benched. */
export const ASSUMED_NUMBERS_PER_ACCOUNT = 200;

/** `nodes(ids:)` for a router, which cannot count ids (the gateway counts each: list-lookups.ts). */
export const ASSUMED_NODE_IDS = FIXED_MAX_NODE_IDS;

/** The `@listSize` arguments, as @pothos/plugin-federation takes them. */
export interface ListSize {
  readonly assumedSize?: number;
  readonly slicingArguments?: string[];
  readonly sizedFields?: string[];
  readonly requireOneSlicingArgument?: boolean;
}

export const OWNED_NUMBERS_LIST_SIZE: ListSize = { assumedSize: ASSUMED_NUMBERS_PER_ACCOUNT };

/** `history(start, end)`: a router reads `end` items; the gateway `end - start` (HISTORY_COST). */
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

/** What only the gateway's estimate reads: the field's `extensions`, never printed. */
export interface CostExtensions {
  /** The slicing argument ends a range that begins at this argument (history's `start`). */
  readonly costRangeStart?: string;
  /** The size is this list argument's length, repeats included (`nodes(ids:)`, `_entities`). */
  readonly costListArgument?: string;
  /** The most items the arguments may ask for; past it the resolver refuses them. */
  readonly costMaxSize?: (limits: SizeLimits) => number;
}

export const HISTORY_COST = {
  costRangeStart: 'start',
  costMaxSize: (limits: SizeLimits) => limits.maxHistoryRange,
} as const satisfies CostExtensions;

export const MESSAGES_COST = { costMaxSize: maxPageSize } as const satisfies CostExtensions;

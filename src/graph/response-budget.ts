/**
 * MAX_RESPONSE_BYTES (docs/limits.md), charged per list as the answer is built. Refusing must stay
 * cheaper than answering, so a request has one refusal, thrown for every list past the ceiling
 * (src/http/plugins/response-ceiling.ts folds them). Lists are paced too.
 */
import {
  GraphQLError,
  defaultFieldResolver,
  getNullableType,
  isListType,
  isObjectType,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { ErrorCode } from '../core/errors.js';
import { createPacer, type Pacer } from './loop-pacing.js';

export interface ResponseBudget {
  /** Adds a list's bytes, returning the list; throws RESPONSE_TOO_LARGE past the ceiling. */
  chargeList<T>(list: T): T;
  /** Throws RESPONSE_TOO_LARGE when the ceiling was already passed. */
  check(): void;
  /** Runs a list resolver now, or on a later turn once this request has held the loop long enough. */
  readonly pacer: Pacer;
  /** About the bytes of the lists charged so far (every field of their items counted). */
  readonly spent: number;
}

export function createResponseBudget(maxBytes: number): ResponseBudget {
  let spent = 0;
  // The items this request already sized (aliases hand back the same objects). Not a WeakMap:
  // its thousands of ephemerons per request were extra work for every GC.
  const sizes = new Map<object, number>();
  let refusal: GraphQLError | null = null;
  return {
    chargeList(list) {
      if (refusal) throw refusal;
      spent += listBytes(list, sizes);
      if (spent > maxBytes) {
        throw (refusal = new GraphQLError(
          `The answer would pass ${maxBytes} bytes (MAX_RESPONSE_BYTES): this list and the ones after it ` +
            'are left out. Ask for less at once: narrower history ranges, smaller pages, fewer aliases.',
          { extensions: { code: ErrorCode.ResponseTooLarge, maxBytes } },
        ));
      }
      return list;
    },
    check() {
      if (refusal) throw refusal;
    },
    pacer: createPacer(),
    get spent() {
      return spent;
    },
  };
}

/** Objects nested deeper than this (none in this schema's domain) count as a constant. */
const MAX_DEPTH = 4;
const DEEP_OBJECT_BYTES = 64;

/** About the bytes `value` takes in a JSON answer with every field selected. */
function jsonBytes(value: unknown, sizes: Map<object, number>, depth = 0): number {
  if (typeof value === 'string') return value.length + 3; // quotes and a comma
  if (typeof value === 'number') return 12;
  if (typeof value === 'boolean') return 6;
  if (typeof value !== 'object') return 0;
  if (value === null) return 5;
  if (value instanceof Date) return 27;
  if (value instanceof Error) return 5; // null in the answer, with an error beside it
  const known = sizes.get(value);
  if (known !== undefined) return known;
  if (depth >= MAX_DEPTH) return DEEP_OBJECT_BYTES;
  let bytes = 2;
  if (Array.isArray(value)) {
    for (const item of value) bytes += jsonBytes(item, sizes, depth + 1);
  } else {
    // for-in rather than Object.entries: no pair arrays per object (a fan-out sizes 1,000).
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      bytes += key.length + 4 + jsonBytes(record[key], sizes, depth + 1);
    }
  }
  sizes.set(value, bytes);
  return bytes;
}

/** What a list field returned, in bytes; items still pending (promises) are sized where they resolve. */
function listBytes(list: unknown, sizes: Map<object, number>): number {
  if (!Array.isArray(list)) return 0;
  let bytes = 2;
  for (const item of list) {
    if (item && typeof (item as { then?: unknown }).then === 'function') continue;
    bytes += jsonBytes(item, sizes);
  }
  return bytes;
}

/** Charges every list field's result to the request's budget; not subscriptions (hours long). */
export function chargeListFields(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    if (type === schema.getSubscriptionType()) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isListType(getNullableType(field.type))) continue;
      const resolve = (field.resolve ?? defaultFieldResolver) as GraphQLFieldResolver<
        unknown,
        { readonly responseBudget?: ResponseBudget }
      >;
      field.resolve = (source, args, context, info) => {
        const budget = context?.responseBudget;
        if (!budget || info.operation.operation === 'subscription') {
          return resolve(source, args, context, info);
        }
        // Refused at once, without a turn in the queue, once the budget is spent.
        budget.check();
        return budget.pacer.run(() => {
          budget.check();
          const result = resolve(source, args, context, info) as unknown;
          if (result && typeof (result as { then?: unknown }).then === 'function') {
            return (result as Promise<unknown>).then((list) => budget.chargeList(list));
          }
          return budget.chargeList(result);
        });
      };
    }
  }
}

/**
 * The cost figures, said once: what routers read in the printed schema (`@listSize` on each list
 * field) and what the gateway's own estimate reads beside it (the fields' extensions, never
 * printed), from the same constants.
 */
import { isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/config.js';
import {
  ASSUMED_NODE_IDS,
  ASSUMED_NUMBERS_PER_ACCOUNT,
  HISTORY_COST,
  MESSAGES_COST,
} from '../../src/graph/cost.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../src/graph/paging.js';
import { printGatewaySchema } from '../../src/graph/print.js';
import { schema } from '../../src/graph/schema.js';

const sdl = printGatewaySchema();

function field(type: string, name: string) {
  const found = schema.getType(type);
  if (!isObjectType(found)) throw new Error(`${type} is not an object type`);
  const result = found.getFields()[name];
  if (!result) throw new Error(`${type}.${name} is missing`);
  return result;
}

describe('the list sizes routers read', () => {
  it('are printed as @listSize on each list field', () => {
    expect(sdl).toContain(`): [Number!] @listSize(assumedSize: ${ASSUMED_NUMBERS_PER_ACCOUNT})`);
    expect(sdl).toContain(`): [Node]! @listSize(assumedSize: ${ASSUMED_NODE_IDS})`);
    expect(sdl).toContain(
      '): History @listSize(slicingArguments: ["end"], sizedFields: ["messages"])',
    );
    expect(sdl).toContain(
      `): MessageConnection @listSize(assumedSize: ${DEFAULT_PAGE_SIZE}, slicingArguments: ["first", "last"], sizedFields: ["edges"], requireOneSlicingArgument: false)`,
    );
  });
});

describe("the gateway's own figures", () => {
  it("sit in the fields' extensions, never in the printed schema", () => {
    expect(field('Number', 'history').extensions).toMatchObject(HISTORY_COST);
    expect(field('Number', 'messages').extensions).toMatchObject(MESSAGES_COST);
    expect(sdl).not.toMatch(/costRangeStart|costMaxSize|costListArgument/);
  });

  it('cap a history at MAX_HISTORY_RANGE and a page at the smaller of it and MAX_PAGE_SIZE', () => {
    expect(HISTORY_COST.costRangeStart).toBe('start');
    expect(HISTORY_COST.costMaxSize({ ...DEFAULT_LIMITS, maxHistoryRange: 7 })).toBe(7);
    expect(MESSAGES_COST.costMaxSize({ ...DEFAULT_LIMITS, maxHistoryRange: 7 })).toBe(7);
    expect(MESSAGES_COST.costMaxSize({ ...DEFAULT_LIMITS, maxHistoryRange: 5_000 })).toBe(
      MAX_PAGE_SIZE,
    );
  });
});

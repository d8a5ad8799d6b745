/**
 * Global ids (src/graph/global-ids.ts): a Number's is typed and distinct from its tid and from
 * every Message id. Refetching by id (`node`, `nodes`) is test/graph/nodes.test.ts's;
 * History.mostRecentSystemId is test/graph/history.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { sharedStack } from '../fixtures/harness.js';
import { ownedIds } from '../fixtures/node-ids.js';

const stack = sharedStack({}, {}, { resetCalls: true });

const idsOf = (credentials = DEMO_CREDENTIALS) => ownedIds(stack.gateway, credentials);

describe('Number.id and Message.id as global ids', () => {
  it('gives every Number a typed id distinct from its tid and from every Message id', async () => {
    const numbers = await idsOf();
    expect(numbers.map((n) => n.tid)).toEqual(DEMO_ACCOUNT.numbers.map((n) => n.tid));
    for (const n of numbers) {
      expect(Buffer.from(n.id, 'base64').toString()).toBe(`Number:${n.tid}`);
      for (const { node } of n.messages.edges) expect(node.id).toMatch(/^[0-9a-f]{32}$/);
    }
    const all = numbers.flatMap((n) => [n.id, ...n.messages.edges.map((e) => e.node.id)]);
    expect(new Set(all).size).toBe(all.length);
  });
});

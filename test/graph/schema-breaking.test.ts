/**
 * The breaking-change check (`npm run schema:breaking`, part of `schema:check`): it can fail, and
 * today's code passes it against schema.released.graphql.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { breakingChanges } from '../../scripts/breaking-changes.js';
import { printClientSchema } from '../../src/graph/print.js';

const released = () => readFile(new URL('../../schema.released.graphql', import.meta.url), 'utf8');

describe('schema breaking-change check', () => {
  it('reports a removed field and a tightened argument type', async () => {
    const before = await released();
    const after = before
      .replace(/^ {2}"""Phone number of the other party\."""\n {2}phone: String!\n\n/m, '')
      .replace('type: NumberType\n  ): [Number!]', 'type: NumberType!\n  ): [Number!]');
    expect(after).not.toBe(before);
    const messages = (await breakingChanges(before, after)).map((c) => c.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining("Field 'phone' was removed from object type 'Message'"),
        expect.stringMatching(/Type for argument 'type' on field 'Query.ownedNumbers' changed/),
      ]),
    );
  });

  it('finds nothing breaking between the released schema and the code', async () => {
    expect(await breakingChanges(await released(), printClientSchema())).toEqual([]);
  });
});

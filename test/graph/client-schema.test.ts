/**
 * schema.client.graphql, the SDL for frontends: plain GraphQL that graphql-js builds, and the
 * live schema with nothing missing but the federation protocol.
 */
import { readFile } from 'node:fs/promises';
import { diff } from '@graphql-inspector/core';
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graph/schema.js';
import { printClientSchema } from '../../src/graph/print.js';

const clientSdl = () => readFile(new URL('../../schema.client.graphql', import.meta.url), 'utf8');

describe('schema.client.graphql', () => {
  it('is what the code builds (npm run schema)', async () => {
    expect(await clientSdl()).toBe(printClientSchema());
  });

  it('builds with graphql-js buildSchema and carries no federation markers', async () => {
    const sdl = await clientSdl();
    // The subgraph SDL does not build: its @link and @key are unknown to plain graphql-js.
    const subgraphSdl = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(() => buildSchema(subgraphSdl)).toThrow();
    expect(() => buildSchema(sdl)).not.toThrow();
    for (const marker of ['@link', '@key', '@shareable', '@tag', '_entities', '_service', '_Any'])
      expect(sdl).not.toContain(marker);
  });

  it('is the live schema less the federation protocol, and nothing else', async () => {
    const changes = await diff(schema, buildSchema(await clientSdl()));
    const paths = changes.map((c) => c.path ?? c.message);
    const federation = /^(Query\._entities|Query\._service|_Any|_Entity|_Service|link__\w+)$/;
    // Anything else that differs (a field, an argument, a description) would be a real mismatch;
    // directive uses and definitions (`@key`, `@link`, ...) are the federation markers dropped.
    const other = paths.filter((p) => !federation.test(p) && !/(^|\.)@\w+/.test(p));
    expect(other).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(['Query._entities', 'Query._service', '_Any']));
  });
});

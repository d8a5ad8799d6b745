/**
 * The two printed schemas: the gateway's for a federation router, which keeps what graphql-js's
 * printer drops (`@key`, `@link`, the protocol's fields), and the frontends', plain GraphQL
 * without any of it. Each ends in exactly one newline, as the checked-in files do.
 */
import { buildSchema, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printClientSchema, printGatewaySchema } from '../../src/graph/print.js';
import { schema } from '../../src/graph/schema.js';

describe('printGatewaySchema', () => {
  it("keeps the federation directives graphql-js's printSchema drops", () => {
    const sdl = printGatewaySchema();
    expect(printSchema(schema)).not.toContain('@key(fields: "tid")');
    expect(sdl).toContain('@key(fields: "tid")');
    expect(sdl).toContain('@link(url: "https://specs.apollo.dev/federation/v2.9"');
    expect(sdl).toMatch(/[^\n]\n$/);
  });
});

describe('printClientSchema', () => {
  it('is plain GraphQL graphql-js builds, with the same query fields less the protocol', () => {
    const sdl = printClientSchema();
    expect(sdl).toMatch(/[^\n]\n$/);
    const built = buildSchema(sdl);
    const served = Object.keys(schema.getQueryType()?.getFields() ?? {}).sort();
    const printed = Object.keys(built.getQueryType()?.getFields() ?? {}).sort();
    expect(printed).toEqual(served.filter((name) => !name.startsWith('_')));
    expect(sdl).not.toMatch(/@key|@link|_service|_entities/);
  });
});

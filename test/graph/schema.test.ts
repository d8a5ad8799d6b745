/** The schema contract: its shape, its descriptions, and the checked-in files generated from it. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  type GraphQLNamedType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graph/schema.js';
import { printGatewaySchema } from '../../src/graph/print.js';

const run = promisify(execFile);
const ours = (type: GraphQLNamedType) =>
  !type.name.startsWith('_') && !isSpecifiedScalarType(type) && !type.name.startsWith('link__');

describe('schema contract', () => {
  it('has the types and fields of the public contract', () => {
    const fieldsOf = (name: string) => {
      const type = schema.getType(name);
      if (!isObjectType(type)) throw new Error(`${name} is not an object type`);
      return Object.fromEntries(
        Object.values(type.getFields()).map((f) => [f.name, String(f.type)]),
      );
    };
    expect(fieldsOf('Query')).toMatchObject({
      ownedNumbers: '[Number!]',
      number: 'Number',
      node: 'Node',
      nodes: '[Node]!',
    });
    expect(fieldsOf('Number')).toEqual({
      id: 'ID!',
      tid: 'ID!',
      number: 'String!',
      type: 'NumberType!',
      webhook: 'String',
      doorbellUrl: 'String',
      history: 'History',
      messages: 'MessageConnection',
    });
    expect(fieldsOf('MessageConnection')).toEqual({
      totalCount: 'Int!',
      edges: '[MessageEdge!]!',
      pageInfo: 'PageInfo!',
    });
    // Nullable items: one unreadable record fails alone, at its index (docs/upstream-quirks.md).
    expect(fieldsOf('MessageEdge')).toEqual({ cursor: 'String!', node: 'Message' });
    expect(fieldsOf('PageInfo')).toEqual({
      hasNextPage: 'Boolean!',
      hasPreviousPage: 'Boolean!',
      startCursor: 'String',
      endCursor: 'String',
    });
    expect(fieldsOf('History')).toEqual({
      tid: 'ID!',
      number: 'String!',
      requestedCount: 'Int!',
      totalCount: 'Int!',
      createdAt: 'DateTime',
      mostRecentSystemId: 'ID',
      mostRecentMessageId: 'ID',
      mostRecentAt: 'DateTime',
      optIn: 'Boolean',
      messages: '[Message]!',
    });
    expect(fieldsOf('Message')).toEqual({
      id: 'ID!',
      systemId: 'ID!',
      sentAt: 'DateTime!',
      tid: 'ID!',
      phone: 'String!',
      direction: 'MessageDirection!',
      body: 'String!',
      mms: 'Boolean!',
      mediaUrl: 'String',
      status: 'MessageStatus!',
    });
    const enumValues = (name: string) => {
      const type = schema.getType(name);
      return isEnumType(type)
        ? type
            .getValues()
            .map((v) => v.name)
            .sort()
        : [];
    };
    expect(enumValues('NumberType')).toEqual(['LOCAL', 'TOLLFREE', 'UNKNOWN']);
    expect(enumValues('MessageDirection')).toEqual(['INBOUND', 'OUTBOUND', 'UNKNOWN']);
  });

  it('describes every type, field, argument and enum value of its own', () => {
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap()).filter(ours)) {
      if (!type.description) missing.push(type.name);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (field.name.startsWith('_')) continue;
          if (!field.description) missing.push(`${type.name}.${field.name}`);
          for (const arg of 'args' in field ? field.args : []) {
            if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
          }
        }
      }
      if (isEnumType(type)) {
        for (const value of type.getValues())
          if (!value.description) missing.push(`${type.name}.${value.name}`);
      }
      if (isScalarType(type) && !type.description) missing.push(type.name);
    }
    expect(missing).toEqual([]);
  });

  it('schema.graphql is what the code builds (npm run schema)', async () => {
    expect(await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8')).toBe(
      printGatewaySchema(),
    );
  });

  it('the generated typed documents are up to date (npm run codegen)', async () => {
    const result = await run('npx', ['graphql-codegen', '--config', 'codegen.ts', '--check'], {
      cwd: new URL('../..', import.meta.url),
    }).then(
      () => 'up to date',
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(result).toBe('up to date');
    // A codegen run in a child process: 10-15 s on a quiet machine, over 20 s on a busy one.
  }, 90_000);
});

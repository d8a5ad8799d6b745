/**
 * The code blocks of the pages a frontend developer copies from: every TypeScript block is a
 * marked snippet (run by test/clients/snippets.test.ts), every GraphQL document validates
 * against the live schema, and every type and field an SDL block shows exists there with the
 * same arguments and type.
 */
import {
  isInterfaceType,
  isObjectType,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type FieldDefinitionNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graph/schema.js';
import { codeBlocks } from './snippets.js';

const FILES = ['README.md', 'docs/errors.md', 'docs/paging.md', 'docs/client-caching.md'];
const blocks = FILES.flatMap((file) => codeBlocks(file));
/** Pages for operators whose GraphQL blocks a frontend copies too (their TypeScript is a router's). */
const GRAPHQL_ONLY = ['docs/federation.md'];

function printType(node: FieldDefinitionNode['type']): string {
  if (node.kind === Kind.NON_NULL_TYPE) return `${printType(node.type)}!`;
  if (node.kind === Kind.LIST_TYPE) return `[${printType(node.type)}]`;
  return node.name.value;
}

/** What an SDL block says that the schema does not have. */
function sdlMismatches(document: DocumentNode): string[] {
  const problems: string[] = [];
  for (const definition of document.definitions) {
    if (
      definition.kind !== Kind.OBJECT_TYPE_DEFINITION &&
      definition.kind !== Kind.INTERFACE_TYPE_DEFINITION
    ) {
      continue;
    }
    const type = schema.getType(definition.name.value);
    if (!isObjectType(type) && !isInterfaceType(type)) {
      problems.push(`no type ${definition.name.value}`);
      continue;
    }
    for (const iface of definition.interfaces ?? []) {
      if (!type.getInterfaces().some((i) => i.name === iface.name.value)) {
        problems.push(`${type.name} does not implement ${iface.name.value}`);
      }
    }
    for (const field of definition.fields ?? []) {
      const real = type.getFields()[field.name.value];
      const where = `${type.name}.${field.name.value}`;
      if (!real) {
        problems.push(`no field ${where}`);
        continue;
      }
      if (String(real.type) !== printType(field.type)) {
        problems.push(`${where} is ${String(real.type)}, the block says ${printType(field.type)}`);
      }
      const shown = (field.arguments ?? [])
        .map((a) => `${a.name.value}: ${printType(a.type)}`)
        .sort();
      const actual = real.args.map((a) => `${a.name}: ${String(a.type)}`).sort();
      if (shown.join(', ') !== actual.join(', ')) {
        problems.push(`${where}(${actual.join(', ')}), the block says (${shown.join(', ')})`);
      }
    }
  }
  return problems;
}

describe('code blocks of README.md and the client docs', () => {
  it('found the blocks', () => {
    expect(blocks.filter((b) => b.lang === 'ts').length).toBeGreaterThan(8);
    expect(blocks.filter((b) => b.lang === 'graphql').length).toBeGreaterThan(4);
  });

  // `snippet=` blocks run in test/clients/snippets.test.ts; `recipe=` blocks are the files of
  // support/recipes/ that the live e2e tests run (test/live/recipe-docs.test.ts).
  it('marks every TypeScript block as a snippet or a recipe, so a test runs it', () => {
    const unmarked = blocks
      .filter(
        (b) => ['ts', 'tsx', 'js', 'jsx'].includes(b.lang) && !/(snippet|recipe)=/.test(b.info),
      )
      .map((b) => `${b.file}: ${b.code.split('\n')[0]}`);
    expect(unmarked).toEqual([]);
  });

  // What a copied client set-up needs outside a browser, and what tells it credentials were
  // refused: errors.md, "Recognising a 4403 close".
  const wsClients = blocks.filter(
    (b) => b.lang === 'ts' && /from 'graphql-ws'/.test(b.code) && /createClient\(/.test(b.code),
  );
  it('found the graphql-ws set-ups', () => {
    expect(wsClients.length).toBeGreaterThanOrEqual(4);
  });
  it.each(wsClients.map((b) => [`${b.file} ${b.info}`, b.code] as const))(
    '%s: names ws for Node and recognises 4403 by the closed event',
    (_where, code) => {
      expect(code).toMatch(/webSocketImpl: WebSocket/);
      expect(code).toMatch(/import WebSocket from 'ws'/);
      expect(code).toMatch(/shouldRetry: \(event\) => !refused\(event\)/);
      expect(code).toMatch(
        /on: \{ closed: \(event\) => refused\(event\) && onRefused\(event\.reason\) \}/,
      );
      expect(code).toMatch(/\?\.code === 4403;/);
    },
  );

  it('has no set-up that asks the running gateway for its schema (introspection is off in production)', () => {
    const asking = blocks
      .filter((b) => /getIntrospectionQuery|__schema|IntrospectionQuery/.test(b.code))
      .map((b) => `${b.file} ${b.info}`);
    expect(asking).toEqual([]);
  });

  // Relay's documents use its own directives: relay-compiler checks them (test/clients/snippets).
  const graphqlBlocks = [...blocks, ...GRAPHQL_ONLY.flatMap((file) => codeBlocks(file))].filter(
    (b) => b.lang === 'graphql' && !/snippet=relay-/.test(b.info),
  );
  it.each(graphqlBlocks.map((b) => [b.file, b.code] as const))(
    '%s: a GraphQL block that matches the schema',
    (_file, code) => {
      let document: DocumentNode;
      try {
        document = parse(code);
      } catch {
        // A selection shown on its own (`number(tid: ...) { ... }`): valid inside a query.
        document = parse(`{ ${code} }`);
      }
      const sdl = document.definitions.some(
        (d) => !('operation' in d) && d.kind !== Kind.FRAGMENT_DEFINITION,
      );
      if (sdl) {
        expect(sdlMismatches(document)).toEqual([]);
      } else {
        expect(validate(schema, document).map((e) => e.message)).toEqual([]);
      }
    },
  );

  it('sees a wrong field in an SDL block (the check above can fail)', () => {
    expect(sdlMismatches(parse('type Number { id: ID! body: String }'))).toEqual([
      'no field Number.body',
    ]);
    expect(sdlMismatches(parse('type Message { body: String }'))).toEqual([
      'Message.body is String!, the block says String',
    ]);
  });
});

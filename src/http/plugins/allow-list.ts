/** Allow-list mode (PERSISTED_OPERATIONS, docs/persisted-operations.md); else APQ (./apq.ts). */
import { readFileSync } from 'node:fs';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { parse } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { ErrorCode } from '../../core/errors.js';

export type PersistedOperations = ReadonlyMap<string, string>;

export class PersistedOperationsError extends Error {
  override readonly name = 'PersistedOperationsError';
}

/**
 * Reads an allow-list: a JSON object of id -> document (GraphQL Code Generator), or an Apollo
 * persisted query manifest. Every document must parse; problems name the file and the entry.
 */
export function readPersistedOperations(path: string): PersistedOperations {
  const fail = (problem: string): never => {
    throw new PersistedOperationsError(`PERSISTED_OPERATIONS (${path}): ${problem}`);
  };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return fail(error instanceof SyntaxError ? 'not valid JSON' : 'cannot be read');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return fail('must be a JSON object');
  let entries: [string, unknown][] = Object.entries(json);
  if ((json as { format?: unknown }).format === 'apollo-persisted-query-manifest') {
    const { operations } = json as { operations?: unknown };
    if (!Array.isArray(operations)) return fail('the manifest has no "operations" array');
    entries = operations.map((operation: unknown, index) => {
      const { id, body } = (operation ?? {}) as { id?: unknown; body?: unknown };
      if (typeof id !== 'string') return fail(`operations[${index}] has no string "id"`);
      return [id, body];
    });
  }
  const operations = new Map<string, string>();
  for (const [id, document] of entries) {
    if (typeof document !== 'string')
      return fail(`entry "${id}" must be a GraphQL document string`);
    try {
      parse(document);
    } catch (error) {
      return fail(`entry "${id}" does not parse: ${(error as Error).message}`);
    }
    operations.set(id, document);
  }
  if (operations.size === 0) fail('lists no operations');
  return operations;
}

/** `documentId` (GraphQL over HTTP, Relay, Code Generator) or Apollo's persistedQuery hash. */
function persistedOperationId(params: {
  documentId?: unknown;
  extensions?: Record<string, unknown> | null;
}): string | null {
  if (typeof params.documentId === 'string' && params.documentId) return params.documentId;
  const persisted = params.extensions?.persistedQuery as { sha256Hash?: unknown } | undefined;
  return typeof persisted?.sha256Hash === 'string' ? persisted.sha256Hash : null;
}

/** A persisted-operations plugin, and the text of a request's operation when it can tell at once. */
export type PersistedPlugin = Plugin & {
  readonly persistedText?: (params: GraphQLParams) => string | null | undefined;
};

export function allowListPlugin(allowList: PersistedOperations): PersistedPlugin {
  const required = {
    message:
      'This gateway only runs persisted operations: send a known operation hash (documentId or extensions.persistedQuery)',
    extensions: { code: ErrorCode.PersistedQueryRequired, http: { status: 400 } },
  };
  const plugin = usePersistedOperations({
    allowArbitraryOperations: false,
    extractPersistedOperationId: (params) =>
      persistedOperationId(params as Parameters<typeof persistedOperationId>[0]),
    getPersistedOperation: (id) => allowList.get(id) ?? null,
    customErrors: {
      persistedQueryOnly: required,
      keyNotFound: required,
      notFound: {
        message: 'PersistedQueryNotFound: this operation is not in the allow-list',
        extensions: { code: ErrorCode.PersistedQueryNotFound, http: { status: 400 } },
      },
    },
  });
  // The list is in memory: a request's text is known before onParams looks it up.
  const persistedText = (params: GraphQLParams): string | null => {
    const id = persistedOperationId(params as Parameters<typeof persistedOperationId>[0]);
    return id === null ? null : (allowList.get(id) ?? null);
  };
  return Object.assign(plugin, { persistedText });
}

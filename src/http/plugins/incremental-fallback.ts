/** @defer and @stream dropped for clients that only read JSON (yoga would answer 406). */
import { visit, type DirectiveNode, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const INCREMENTAL = new Set(['defer', 'stream']);
/** The same document without @defer/@stream, made once per cached document. */
const withoutIncremental = new WeakMap<DocumentNode, DocumentNode>();

function strip(document: DocumentNode): DocumentNode {
  let stripped = withoutIncremental.get(document);
  if (!stripped) {
    let changed = false;
    const visited = visit(document, {
      Directive(node: DirectiveNode) {
        if (!INCREMENTAL.has(node.name.value)) return undefined;
        changed = true;
        return null;
      },
    });
    stripped = changed ? visited : document;
    withoutIncremental.set(document, stripped);
  }
  return stripped;
}

/** An `Accept` of a client that can read a multipart or event-stream answer. */
const ACCEPTS_PARTS = /multipart\/mixed|text\/event-stream|\*\/\*/i;

export function useIncrementalFallback(): Plugin<{ request?: Request }> {
  return {
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request || ACCEPTS_PARTS.test(request.headers.get('accept') ?? '')) return;
      // Mutating args is how envelop lets a hook change what the next ones and execute see.
      (args as { document: DocumentNode }).document = strip(args.document);
    },
  };
}

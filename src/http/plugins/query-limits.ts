/**
 * What an untrusted client may ask of one request, enforced before any upstream call: tokens
 * (parse), aliases, depth and directives (graphql-armor, validation) and an upstream-call cost
 * (graphql-query-complexity, before execution, with the request's variables so @skip/@include
 * count correctly). The body size limit is src/http/plugins/request-body-limit.ts.
 */
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import {
  BREAK,
  GraphQLError,
  Kind,
  visit,
  type DocumentNode,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { QueryLimits } from '../../config/config.js';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';

const COST_ESTIMATORS = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 0 })];

type Limit = 'aliases' | 'depth' | 'directives' | 'tokens';

/**
 * graphql-armor words every refusal as "Syntax Error: … limit of N exceeded, found M", though only
 * the token count is checked while parsing and none of them is a syntax error. The client sees a
 * limit instead: what was too much, how much was found, and the allowance.
 */
export function limitError(limit: Limit, max: number, armorError: GraphQLError): GraphQLError {
  const found = /found (\d+)/.exec(armorError.message)?.[1] ?? `more than ${max}`;
  const message = {
    aliases: `Too many aliases: ${found} in this document, at most ${max} allowed.`,
    depth: `Query too deep: ${found} levels of fields, at most ${max} allowed.`,
    directives: `Too many directives: ${found} in this document, at most ${max} allowed.`,
    tokens: `Document too long: more than ${max} tokens (names, punctuation and values), the limit.`,
  }[limit];
  return new GraphQLError(message, {
    extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } },
  });
}

// Report rather than throw: a thrown rule error escapes validation and loses yoga's 400 status
// and GRAPHQL_VALIDATION_FAILED code; a reported one is an ordinary validation error.
function report(limit: Limit, max: number) {
  return {
    n: max,
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) =>
        context?.reportError(limitError(limit, max, error)),
    ],
  };
}

export function queryLimitPlugins(limits: QueryLimits): Plugin[] {
  return [
    // Counted while parsing, so there is no validation context to report to: throw ours first.
    maxTokensPlugin({
      n: limits.maxTokens,
      onReject: [
        (_: unknown, error: GraphQLError) => {
          throw limitError('tokens', limits.maxTokens, error);
        },
      ],
    }),
    maxAliasesPlugin(report('aliases', limits.maxAliases)),
    maxDepthPlugin({
      ...report('depth', limits.maxDepth),
      ignoreIntrospection: true,
      flattenFragments: true,
    }),
    maxDirectivesPlugin(report('directives', limits.maxDirectives)),
    upstreamCostLimit(limits.maxCost),
  ];
}

/**
 * Whether a document's cost can depend on its variables: only through @skip/@include with a
 * variable (every field's cost is a constant). Checked once per cached document.
 */
const variableDirectives = new WeakMap<DocumentNode, boolean>();
function costDependsOnVariables(document: DocumentNode): boolean {
  let depends = variableDirectives.get(document);
  if (depends === undefined) {
    depends = false;
    visit(document, {
      Directive(node) {
        if (!node.arguments?.some((arg) => arg.value.kind === Kind.VARIABLE)) return undefined;
        depends = true;
        return BREAK;
      },
    });
    variableDirectives.set(document, depends);
  }
  return depends;
}

function upstreamCostLimit(maxCost: number): Plugin {
  // Cost per cached document and operation name, for documents whose cost has no variables in it.
  const costs = new WeakMap<DocumentNode, Map<string, number>>();
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const cacheable = !costDependsOnVariables(args.document);
      const byOperation = cacheable
        ? (costs.get(args.document) ?? new Map<string, number>())
        : null;
      let cost = byOperation?.get(args.operationName ?? '');
      if (cost === undefined) {
        try {
          cost = getComplexity({
            schema: args.schema,
            query: args.document,
            variables: (args.variableValues ?? {}) as Record<string, unknown>,
            ...(args.operationName ? { operationName: args.operationName } : {}),
            estimators: COST_ESTIMATORS,
          });
        } catch {
          // Bad variables: execution reports them with graphql-js's own clear message.
          return;
        }
        if (byOperation) {
          byOperation.set(args.operationName ?? '', cost);
          costs.set(args.document, byOperation);
        }
      }
      if (cost <= maxCost) return;
      setResultAndStopExecution({
        errors: [
          new GraphQLError(
            `Query cost limit of ${maxCost} exceeded, found ${cost}: each history field, and each top-level field, counts as one call to the SMS service`,
            { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } } },
          ),
        ],
      });
    },
  };
}

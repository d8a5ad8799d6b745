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
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { QueryLimits } from '../../config/config.js';
import { ErrorCode } from '../../core/errors.js';
import { FIELDS_COSTED_BY_ARGUMENTS } from '../../graph/cost.js';
import {
  fieldExtensionsEstimator,
  getComplexity,
  simpleEstimator,
  type ComplexityEstimator,
} from 'graphql-query-complexity';

const COST_ESTIMATORS = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 0 })];

/**
 * A refusal of the document as a whole, with the status graphql-js's own validation errors get:
 * HTTP 400 with `Accept: application/graphql-response+json`, 200 with `application/json` (yoga's
 * `spec` flag, as the GraphQL over HTTP spec asks), so every limit answers like a validation error.
 */
const REFUSED_DOCUMENT = {
  code: ErrorCode.GraphQLValidationFailed,
  http: { status: 400, spec: true },
} as const;

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
  return new GraphQLError(message, { extensions: REFUSED_DOCUMENT });
}

// Report rather than throw: a thrown rule error escapes validation and loses yoga's status and
// GRAPHQL_VALIDATION_FAILED code; a reported one is an ordinary validation error.
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
 * Whether a document's cost can depend on its variables: through @skip/@include with a variable,
 * or a variable in the arguments of a field costed by its arguments (a list's length, a cursor).
 * Every other field's cost is a constant. Checked once per cached document.
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
      Field(node) {
        if (!FIELDS_COSTED_BY_ARGUMENTS.has(node.name.value)) return undefined;
        if (!node.arguments?.some((arg) => holdsVariable(arg.value))) return undefined;
        depends = true;
        return BREAK;
      },
    });
    variableDirectives.set(document, depends);
  }
  return depends;
}

function holdsVariable(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(holdsVariable);
  if (value.kind === Kind.OBJECT) return value.fields.some((field) => holdsVariable(field.value));
  return false;
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
      const charged = chargedFields(args);
      setResultAndStopExecution({
        errors: [
          new GraphQLError(
            `Query cost limit of ${maxCost} exceeded, found ${cost} calls to the SMS service: ${charged}`,
            { extensions: REFUSED_DOCUMENT },
          ),
        ],
      });
    },
  };
}

type ExecuteArgs = Parameters<NonNullable<Plugin['onExecute']>>[0]['args'];

/**
 * What the cost was made of, field by field, as the estimators charged it ("history 40×1, node
 * 3×2"): counted again on the refusal path only, so the message always says what was charged.
 */
function chargedFields(args: ExecuteArgs): string {
  const tally = new Map<string, { count: number; cost: number; each: Set<number> }>();
  const [fieldEstimator, ...rest] = COST_ESTIMATORS;
  const recording: ComplexityEstimator = (options) => {
    const total = fieldEstimator?.(options);
    if (typeof total !== 'number') return total;
    const own = total - options.childComplexity;
    if (own > 0) {
      const entry = tally.get(options.field.name) ?? { count: 0, cost: 0, each: new Set() };
      entry.count += 1;
      entry.cost += own;
      entry.each.add(own);
      tally.set(options.field.name, entry);
    }
    return total;
  };
  getComplexity({
    schema: args.schema,
    query: args.document,
    variables: (args.variableValues ?? {}) as Record<string, unknown>,
    ...(args.operationName ? { operationName: args.operationName } : {}),
    estimators: [recording, ...rest],
  });
  return [...tally]
    .sort(([, a], [, b]) => b.cost - a.cost)
    .map(([name, { count, cost, each }]) =>
      each.size === 1 ? `${name} ${count}×${[...each][0]}` : `${name} ${cost} (${count} fields)`,
    )
    .join(', ');
}

/** Limits checked before any upstream call (docs/limits.md): graphql-armor's, and the cost. */
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError, Kind, type DocumentNode, type ValidationContext } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { QueryLimits } from '../../config/config.js';
import { ErrorCode } from '../../core/errors.js';
import type { SizeLimits } from '../../graph/cost.js';
import { estimateCost, type CostEstimate } from '../../graph/estimate-cost.js';
import { UNITS_PER_ITEM } from '../../traffic/fair-admission.js';
import type { Ticketed } from '../../traffic/ticket.js';
import { busyError } from './admission-refusals.js';
import { useValidationBudget } from './validation-budget.js';

/** Answered like a validation error: yoga's `spec` flag gives 400 or 200 by the `Accept`. */
const REFUSED_DOCUMENT = {
  code: ErrorCode.GraphQLValidationFailed,
  http: { status: 400, spec: true },
} as const;

type Limit = 'aliases' | 'depth' | 'directives' | 'tokens';

/** graphql-armor words every refusal as a "Syntax Error"; none is one. */
function limitError(limit: Limit, max: number, armorError: GraphQLError): GraphQLError {
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

export function queryLimitPlugins(
  limits: QueryLimits & SizeLimits,
  costObserver: CostObserver | null = null,
): Plugin[] {
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
    // Before any rule runs: what the rules would cost, counted in one linear pass.
    useValidationBudget(),
    maxAliasesPlugin(report('aliases', limits.maxAliases)),
    maxDepthPlugin({
      ...report('depth', limits.maxDepth),
      ignoreIntrospection: true,
      flattenFragments: true,
    }),
    maxDirectivesPlugin(report('directives', limits.maxDirectives)),
    upstreamCostLimit(limits, costObserver),
  ];
}

/** A document without variables costs the same every time it runs: its estimate is kept. */
function hasVariables(document: DocumentNode): boolean {
  return document.definitions.some(
    (d) => d.kind === Kind.OPERATION_DEFINITION && (d.variableDefinitions?.length ?? 0) > 0,
  );
}

/** Where the estimate and the actual cost of each operation are recorded (metrics.ts). */
export interface CostObserver {
  costEstimated(items: number): void;
  costActual(items: number): void;
}

/** An argument past its field's maximum counts at it: that field answers BAD_USER_INPUT. */
function upstreamCostLimit(
  limits: QueryLimits & SizeLimits,
  observer: CostObserver | null,
): Plugin {
  // Estimates per cached document and operation name, for documents without variables.
  const estimates = new WeakMap<DocumentNode, Map<string, CostEstimate>>();
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const byOperation = hasVariables(args.document)
        ? null
        : (estimates.get(args.document) ?? new Map<string, CostEstimate>());
      let estimate = byOperation?.get(args.operationName ?? '');
      if (estimate === undefined) {
        try {
          estimate = estimateCost({
            schema: args.schema,
            document: args.document,
            variables: args.variableValues as Record<string, unknown> | null | undefined,
            operationName: args.operationName,
            limits,
          });
        } catch {
          // Bad variables: execution reports them with graphql-js's own clear message.
          return undefined;
        }
        if (byOperation) {
          byOperation.set(args.operationName ?? '', estimate);
          estimates.set(args.document, byOperation);
        }
      }
      observer?.costEstimated(estimate.cost);
      if (estimate.cost > limits.maxCost) {
        setResultAndStopExecution({
          errors: [
            new GraphQLError(
              `Query cost limit of ${limits.maxCost} exceeded: this operation may return or fetch ` +
                `${estimate.cost} items (objects, each list counted at its size; docs/limits.md): ` +
                chargedFields(estimate),
              { extensions: REFUSED_DOCUMENT },
            ),
          ],
        });
        return undefined;
      }
      // Priced before it runs: the seat's holder is charged what this document is expected to
      // cost, so a burst weighs what it will cost before any of it ends, and a costly document
      // waits for room among costly work (fair-admission.ts).
      const room = (args.contextValue as Ticketed).admitted?.price?.(
        args.document,
        estimate.cost * UNITS_PER_ITEM,
      );
      const observed = observer ? observeActualCost(observer) : undefined;
      if (!room) return observed;
      return room.then((refusal) => {
        if (refusal) setResultAndStopExecution({ errors: [busyError(refusal)] });
        return observed;
      });
    },
  };
}

/** Records each operation's actual cost, in the estimate's unit, once its result is out. */
function observeActualCost(observer: CostObserver) {
  return {
    onExecuteDone({ result }: { result: unknown }) {
      if (!isAsyncIterable(result)) {
        observer.costActual(countItems(result));
        return undefined;
      }
      let items = 0;
      return {
        onNext: ({ result: part }: { result: unknown }) => {
          items += countItems(part);
        },
        onEnd: () => observer.costActual(items),
      };
    },
  };
}

/** The largest parts of the estimate, field by field: "Number.history 5800, Query.ownedNumbers 200". */
function chargedFields({ byField }: CostEstimate): string {
  const parts = [...byField].sort(([, a], [, b]) => b - a);
  const shown = parts.slice(0, 5).map(([field, items]) => `${field} ${items}`);
  if (parts.length > shown.length) shown.push(`${parts.length - shown.length} more`);
  return shown.join(', ');
}

/** The actual cost, in the estimate's unit: the objects in the data sent, incremental parts too. */
function countItems(result: unknown): number {
  const payload = result as {
    data?: unknown;
    incremental?: readonly { data?: unknown; items?: unknown }[];
  };
  let count = 0;
  const stack: unknown[] = [payload.data];
  for (const part of payload.incremental ?? []) stack.push(part.data, part.items);
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    count += 1;
    for (const key in value) stack.push((value as Record<string, unknown>)[key]);
  }
  // The root `data` object is the operation, not an item (a query costs 0 itself).
  return payload.data && typeof payload.data === 'object' ? count - 1 : count;
}

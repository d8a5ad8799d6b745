/**
 * Validation priced before it runs (docs/limits.md, "Validation"): a linear pass over the parsed
 * document counts the work graphql-js's rules grow with, and a document over the budget is refused
 * before a single rule runs.
 *
 * Why a count of our own: the token limit bounds the text, not the rules. OverlappingFieldsCanBeMerged
 * compares every pair of same-named fields in a selection set, fragments flattened in, and again
 * inside each pair's sub-selections: 700 `tid`s under `ownedNumbers` (2,100 tokens, 3 kB) cost
 * 260-500 ms to validate, 30 inline fragments of 20 `tid`s 140-190 ms, each a new text that no
 * cache helps. Written by hand: graphql-armor bounds aliases, depth, directives and tokens, none of
 * which these documents exceed.
 */
import {
  GraphQLError,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode } from '../../core/errors.js';

/**
 * Field comparisons and flattened selections one document may cost: about 1 µs each in graphql-js,
 * so no document takes more than a few milliseconds to accept or refuse. The widest document the
 * schema gives a reason to send (every field of every type, the GraphiQL default) costs under 100.
 */
export const MAX_VALIDATION_WORK = 5_000;
/**
 * Selections with every fragment spread expanded where it is spread: what the depth limit, the
 * cost estimate and execution walk. A chain of fragments each spread twice doubles it per link.
 */
export const MAX_EXPANDED_SELECTIONS = 10_000;

class OverBudget extends Error {}

/** What a document costs to validate and expand, or the error that refuses it. */
export function validationBudgetError(
  document: DocumentNode,
  maxWork = MAX_VALIDATION_WORK,
  maxExpanded = MAX_EXPANDED_SELECTIONS,
): GraphQLError | null {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  try {
    boundExpandedSelections(document, fragments, maxExpanded);
    countComparisons(document, fragments, maxWork);
    return null;
  } catch (error) {
    if (!(error instanceof OverBudget)) throw error;
    return new GraphQLError(error.message, {
      extensions: { code: ErrorCode.GraphQLValidationFailed, http: { status: 400, spec: true } },
    });
  }
}

/**
 * Counts the field pairs OverlappingFieldsCanBeMerged compares (same response name, in one
 * selection set with fragments flattened in, then their sub-selections pairwise), and the fields
 * flattened to find them, stopping as soon as the budget is spent: the count never costs more than
 * the budget it guards.
 */
function countComparisons(
  document: DocumentNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  maxWork: number,
): void {
  let work = 0;
  const spend = (units: number): void => {
    work += units;
    if (work > maxWork) {
      throw new OverBudget(
        `Document too costly to validate: more than ${maxWork} comparisons of same-named fields ` +
          '(fields repeated in one selection, fragments spread together); ask for each field once ' +
          'per selection (docs/limits.md).',
      );
    }
  };
  const flat = new Map<SelectionSetNode, Map<string, FieldNode[]>>();
  /** A selection set's fields by response name, inline and named fragments flattened in. */
  const flatten = (set: SelectionSetNode): Map<string, FieldNode[]> => {
    let byName = flat.get(set);
    if (byName) return byName;
    byName = new Map();
    // Each named fragment once per set, as graphql-js collects them (and so no cycle loops here).
    const seen = new Set<string>();
    const collect = (selections: SelectionSetNode): void => {
      for (const selection of selections.selections) {
        if (selection.kind === Kind.FIELD) {
          spend(1);
          const name = selection.alias?.value ?? selection.name.value;
          const group = byName?.get(name);
          if (group) group.push(selection);
          else byName?.set(name, [selection]);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          collect(selection.selectionSet);
        } else if (!seen.has(selection.name.value)) {
          seen.add(selection.name.value);
          const fragment = fragments.get(selection.name.value);
          if (fragment) collect(fragment.selectionSet);
        }
      }
    };
    collect(set);
    flat.set(set, byName);
    return byName;
  };
  /** Two same-named fields' sub-selections, compared name by name. */
  const between = (a: SelectionSetNode, b: SelectionSetNode): void => {
    const right = flatten(b);
    for (const [name, lefts] of flatten(a)) {
      const rights = right.get(name);
      if (!rights) continue;
      for (const left of lefts) {
        for (const other of rights) {
          spend(1);
          if (left.selectionSet && other.selectionSet) {
            between(left.selectionSet, other.selectionSet);
          }
        }
      }
    }
  };
  // graphql-js visits every selection set of the document, fragments' included, once each.
  const within = (set: SelectionSetNode): void => {
    for (const group of flatten(set).values()) {
      for (let i = 0; i < group.length; i += 1) {
        for (let j = i + 1; j < group.length; j += 1) {
          spend(1);
          const [left, right] = [group[i]?.selectionSet, group[j]?.selectionSet];
          if (left && right) between(left, right);
        }
      }
    }
    for (const selection of set.selections) {
      if (selection.kind !== Kind.FRAGMENT_SPREAD && selection.selectionSet) {
        within(selection.selectionSet);
      }
    }
  };
  for (const definition of document.definitions) {
    if ('selectionSet' in definition && definition.selectionSet) within(definition.selectionSet);
  }
}

/** Each operation's selections with every spread expanded, each fragment sized once (a cycle: 0 more). */
function boundExpandedSelections(
  document: DocumentNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  maxExpanded: number,
): void {
  const sizes = new Map<string, number>();
  const sizeOf = (set: SelectionSetNode): number => {
    let size = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        if (!sizes.has(name)) {
          // Marked before descending: a cycle (NoFragmentCycles refuses it) counts nothing more.
          sizes.set(name, 0);
          const fragment = fragments.get(name);
          sizes.set(name, fragment ? sizeOf(fragment.selectionSet) : 0);
        }
        size += sizes.get(name) ?? 0;
      } else {
        size += 1;
        if (selection.selectionSet) size += sizeOf(selection.selectionSet);
      }
      // Sizes only add up: checked as they grow, the sum never reaches float's imprecision.
      if (size > maxExpanded) {
        throw new OverBudget(
          `Document too large once its fragments are expanded: more than ${maxExpanded} ` +
            'selections where at most that many are allowed (docs/limits.md).',
        );
      }
    }
    return size;
  };
  // One operation runs per request: each is bounded on its own.
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) sizeOf(definition.selectionSet);
  }
}

/**
 * Refuses an over-budget document before validation runs, as a validation error (400,
 * GRAPHQL_VALIDATION_FAILED). A verdict per parsed document, which yoga keeps by text: a repeated
 * document is counted once.
 */
export function useValidationBudget(
  maxWork = MAX_VALIDATION_WORK,
  maxExpanded = MAX_EXPANDED_SELECTIONS,
): Plugin {
  const verdicts = new WeakMap<DocumentNode, GraphQLError | null>();
  return {
    onValidate({ params, setResult }) {
      let verdict = verdicts.get(params.documentAST);
      if (verdict === undefined) {
        verdict = validationBudgetError(params.documentAST, maxWork, maxExpanded);
        verdicts.set(params.documentAST, verdict);
      }
      if (verdict) setResult([verdict]);
    },
  };
}

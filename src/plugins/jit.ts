/**
 * graphql-jit: each distinct operation is compiled once into a plain function (cached against
 * yoga's cached document), and its result is serialised by a stringifier generated for that
 * operation's shape, instead of graphql-js walking the schema for every field of every request.
 */
import { useGraphQlJit } from '@envelop/graphql-jit';

export function useJit(): ReturnType<typeof useGraphQlJit> {
  return useGraphQlJit();
}

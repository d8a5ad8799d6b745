/** What a subscription the gateway refuses answers over SSE, for the tests of its arguments. */
import { expect } from 'vitest';
import type { LiveStack } from '../fixtures/live-stack.js';

/** The one error a refused subscription answers with (its stream holds nothing else). */
export async function refusedWith(
  s: LiveStack,
  query: string,
  headers: Record<string, string>,
  variables?: Record<string, unknown>,
) {
  const stream = await s.open(query, headers, variables);
  await stream.waitFor(1);
  expect(stream.events[0]?.data ?? null).toBeNull();
  expect(stream.events[0]?.errors).toHaveLength(1);
  return stream.events[0]!.errors![0]!;
}

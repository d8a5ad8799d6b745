/**
 * The id of the request being served, carried through async work so every log line written
 * on its behalf (upstream retries, failures) names it without passing a logger around.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { HeldWarnings } from './warning-rollup.js';

/** The request being served: its id, and the warnings held until it ends. */
export interface RequestScope {
  readonly id: string;
  readonly warnings?: HeldWarnings;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

export const REQUEST_ID_HEADER = 'x-request-id';

// A caller's id is kept when it is short and plain (so it can't forge log structure), else replaced.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER);
  return given !== null && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

export function currentRequestId(): string | undefined {
  return requestScope.getStore()?.id;
}

/** The warnings of the request being served, held until it ends; none outside a request. */
export function currentWarnings(): HeldWarnings | undefined {
  return requestScope.getStore()?.warnings;
}

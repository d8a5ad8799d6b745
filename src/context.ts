/**
 * Per-request context: the credentials read from this request's headers and, on first use,
 * a fresh set of loaders bound to them. Nothing here outlives the request.
 */
import { readCredentials, type CredentialsResult } from './credentials.js';
import { unauthenticated } from './errors.js';
import type { UpstreamClient } from './upstream/client.js';
import { createRequestLoaders, type RequestLoaders } from './upstream/loaders.js';

export interface GatewayContext {
  readonly limits: RequestLimits;
  /**
   * The loaders for this request's account. Throws UNAUTHENTICATED when the request carries no
   * usable credentials, before any upstream call.
   */
  upstream(): RequestLoaders;
}

export interface RequestLimits {
  /** Widest `history(start, end)` range accepted, as `end - start`. */
  readonly maxHistoryRange: number;
}

export interface ContextDependencies {
  readonly limits: RequestLimits;
  readonly client: UpstreamClient;
  /** Upstream calls one request may have in flight at once. */
  readonly upstreamConcurrency: number;
}

export function createContext(headers: Headers, deps: ContextDependencies): GatewayContext {
  const credentials = readCredentials(headers);
  let loaders: RequestLoaders | undefined;
  return {
    limits: deps.limits,
    upstream() {
      if (credentials.kind !== 'present') throw unauthenticated(refusal(credentials));
      loaders ??= createRequestLoaders(deps.client, credentials.credentials, {
        concurrency: deps.upstreamConcurrency,
      });
      return loaders;
    },
  };
}

function refusal(credentials: Exclude<CredentialsResult, { kind: 'present' }>): string {
  return credentials.kind === 'missing'
    ? 'Credentials required: send "Authorization: Basic base64(sys_id:auth_token)" or the X-Sys-Id and X-Auth-Token headers'
    : `Malformed credentials: ${credentials.reason}`;
}

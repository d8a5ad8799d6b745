/**
 * Per-request context: the credentials read from this request's headers and, on first use,
 * a fresh set of loaders bound to them. Nothing here outlives the request.
 */
import type { GatewayLimits } from './config.js';
import { readCredentials, type CredentialsResult } from './credentials.js';
import { unauthenticated } from './errors.js';
import type { UpstreamClient } from './upstream/client.js';
import { createRequestLoaders, type RequestLoaders } from './upstream/loaders.js';

export interface GatewayContext {
  readonly limits: GatewayLimits;
  /**
   * The loaders for this request's account. Throws UNAUTHENTICATED when the request carries no
   * usable credentials, before any upstream call.
   */
  upstream(): RequestLoaders;
}

export interface ContextDependencies {
  readonly client: UpstreamClient;
  readonly limits: GatewayLimits;
}

export function createContext(headers: Headers, deps: ContextDependencies): GatewayContext {
  const credentials = readCredentials(headers);
  let loaders: RequestLoaders | undefined;
  return {
    limits: deps.limits,
    upstream() {
      if (credentials.kind !== 'present') throw unauthenticated(refusal(credentials));
      loaders ??= createRequestLoaders(deps.client, credentials.credentials, {
        concurrency: deps.limits.upstreamConcurrency,
        maxCalls: deps.limits.maxUpstreamCalls,
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

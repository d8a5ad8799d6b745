/**
 * Per-request context: the credentials read from this request's headers and, on first use,
 * a fresh set of loaders bound to them. Nothing here outlives the request.
 */
import type { GatewayLimits } from '../config/config.js';
import { readCredentials, type Credentials, type CredentialsResult } from '../core/credentials.js';
import { unauthenticated } from '../core/errors.js';
import type { CursorCodec } from './cursors.js';
import type { LiveHub } from '../live/hub.js';
import type { UpstreamClient } from '../upstream/client.js';
import { createRequestLoaders, type RequestLoaders } from '../upstream/loaders.js';
import { createResponseBudget, type ResponseBudget } from './response-budget.js';

export interface GatewayContext {
  readonly limits: GatewayLimits;
  /** Signs and checks `messages` page cursors (one codec per gateway, so cursors outlive requests). */
  readonly cursors: CursorCodec;
  /** Live subscriptions of this copy; null when live updates are off. */
  readonly live: LiveHub | null;
  /** The bytes this request's answer may still take (MAX_RESPONSE_BYTES). */
  readonly responseBudget: ResponseBudget;
  /**
   * The loaders for this request's account. Throws UNAUTHENTICATED when the request carries no
   * usable credentials, before any upstream call.
   */
  upstream(): RequestLoaders;
  /** The credentials too, for a live subscription that outlives this request's loaders. */
  account(): { readonly credentials: Credentials; readonly loaders: RequestLoaders };
}

export interface ContextDependencies {
  readonly client: UpstreamClient;
  readonly limits: GatewayLimits;
  readonly cursors: CursorCodec;
  readonly live?: LiveHub | null;
}

export function createContext(headers: Headers, deps: ContextDependencies): GatewayContext {
  const credentials = readCredentials(headers);
  let loaders: RequestLoaders | undefined;
  const account = () => {
    if (credentials.kind !== 'present') throw unauthenticated(refusal(credentials));
    loaders ??= createRequestLoaders(deps.client, credentials.credentials, {
      concurrency: deps.limits.upstreamConcurrency,
      maxCalls: deps.limits.maxUpstreamCalls,
      maxCallSpan: deps.limits.maxHistoryRange,
    });
    return { credentials: credentials.credentials, loaders };
  };
  return {
    limits: deps.limits,
    cursors: deps.cursors,
    live: deps.live ?? null,
    responseBudget: createResponseBudget(deps.limits.maxResponseBytes),
    upstream: () => account().loaders,
    account,
  };
}

function refusal(credentials: Exclude<CredentialsResult, { kind: 'present' }>): string {
  return credentials.kind === 'missing'
    ? 'Credentials required: send "Authorization: Basic base64(sys_id:auth_token)" or the X-Sys-Id and X-Auth-Token headers'
    : `Malformed credentials: ${credentials.reason}`;
}

/**
 * Per-request context: the request's credentials and, on first use, loaders bound to them, whose
 * calls carry the request's caller (its ticket's identity, and the bill of its flow).
 */
import type { Context } from '@opentelemetry/api';
import type { GatewayLimits } from '../config/config.js';
import type { Credentials } from '../core/credentials.js';
import type { Identity } from '../core/identity.js';
import { unauthenticated } from '../core/errors.js';
import type { CursorCodec } from './cursors.js';
import type { LiveHub } from '../live/hub.js';
import type { UpstreamClient } from '../core/upstream-client.js';
import { createRequestLoaders, type RequestLoaders } from '../upstream/loaders.js';
import { createResponseBudget, type ResponseBudget } from './response-budget.js';

export interface GatewayContext {
  readonly limits: GatewayLimits;
  /** One per gateway, so cursors outlive requests. */
  readonly cursors: CursorCodec;
  /** Live subscriptions of this copy; null when live updates are off. */
  readonly live: LiveHub | null;
  /** The bytes this request's answer may still take (MAX_RESPONSE_BYTES). */
  readonly responseBudget: ResponseBudget;
  /** This request's loaders; UNAUTHENTICATED, before any call, without usable credentials. */
  upstream(): RequestLoaders;
  /** The credentials too, for a live subscription that outlives this request's loaders. */
  account(): { readonly credentials: Credentials; readonly loaders: RequestLoaders };
  /**
   * The operation span's OpenTelemetry context, set by tracing as the operation starts
   * (src/observability/tracing.ts): its calls' spans are children of it. No async context
   * carries it: Node 20's AsyncLocalStorage hooks every promise, which cost a traced copy at 1%
   * sampling 40% of its req/s.
   */
  trace?: Context;
}

export interface ContextDependencies {
  readonly client: UpstreamClient;
  readonly limits: GatewayLimits;
  readonly cursors: CursorCodec;
  readonly live?: LiveHub | null;
}

/**
 * `identity`: the request's ticket's (traffic/ticket.ts); `arrivedAt`: when its headers were read;
 * `traceOf`: the operation's `trace`, read when its first call is made.
 */
export function createContext(
  identity: Identity,
  deps: ContextDependencies,
  arrivedAt = performance.now(),
  traceOf: () => Context | undefined = () => undefined,
): GatewayContext {
  let loaders: RequestLoaders | undefined;
  const account = () => {
    if (identity.kind !== 'present') throw unauthenticated(refusal(identity));
    loaders ??= createRequestLoaders(deps.client, identity.credentials, {
      maxCalls: deps.limits.maxUpstreamCalls,
      maxCallSpan: deps.limits.maxHistoryRange,
      arrivedAt,
      caller: deps.client.callerOf?.(identity),
      trace: traceOf(),
    });
    return { credentials: identity.credentials, loaders };
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

function refusal(credentials: Exclude<Identity, { kind: 'present' }>): string {
  return credentials.kind === 'missing'
    ? 'Credentials required: send "Authorization: Basic base64(sys_id:auth_token)" or the X-Sys-Id and X-Auth-Token headers'
    : `Malformed credentials: ${credentials.reason}`;
}

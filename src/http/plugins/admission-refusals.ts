/**
 * Answers a request admission refused (its ticket says why) before its body is read: 429 through
 * yoga's error path, so it carries CORS headers and a request id and is logged like any other.
 */
import type { GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { Refusal } from '../../traffic/fair-admission.js';
import { ErrorCode } from '../../core/errors.js';
import { ticketOf } from '../../traffic/ticket.js';

export function useAdmissionRefusals(): Plugin {
  return {
    onRequestParse({ serverContext }) {
      const { refusal } = ticketOf(serverContext);
      if (!refusal) return;
      throw busyError(refusal);
    },
  };
}

/** RATE_LIMITED with 429 and Retry-After: the answer to every refusal of admission's. */
export function busyError(refusal: Refusal): GraphQLError {
  const why =
    refusal.refused === 'line-full'
      ? 'this account already has the most requests waiting that a copy holds'
      : 'the request waited its turn for too long';
  return createGraphQLError(
    `The gateway is busy and ${why}: retry after ${refusal.retryAfterSeconds} s, or send fewer requests at once.`,
    {
      extensions: {
        code: ErrorCode.RateLimited,
        retryAfter: refusal.retryAfterSeconds,
        http: { status: 429, headers: { 'retry-after': String(refusal.retryAfterSeconds) } },
      },
    },
  );
}

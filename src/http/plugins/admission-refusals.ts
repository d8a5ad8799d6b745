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

/**
 * RATE_LIMITED (over HTTP with 429 and Retry-After): the answer to every refusal of admission's,
 * to a request or to a WebSocket operation.
 */
export function busyError(
  refusal: Refusal,
  over: 'requests' | 'operations' = 'requests',
): GraphQLError {
  const why =
    refusal.refused === 'line-full'
      ? `this account already has the most ${over} waiting that a copy holds`
      : `the ${over === 'requests' ? 'request' : 'operation'} waited its turn for too long`;
  const retryAfter = refusal.retryAfterSeconds;
  // `http` is yoga's: the status and header of an HTTP answer; a WebSocket has neither.
  const http = { status: 429, headers: { 'retry-after': String(retryAfter) } };
  return createGraphQLError(
    `The gateway is busy and ${why}: retry after ${retryAfter} s, or send fewer ${over} at once.`,
    {
      extensions: {
        code: ErrorCode.RateLimited,
        retryAfter,
        ...(over === 'requests' ? { http } : {}),
      },
    },
  );
}

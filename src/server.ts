/**
 * createGateway() builds the yoga instance: schema, per-request context, error masking,
 * GraphiQL, health and readiness. It never listens; src/main.ts does, and tests call
 * `gateway.fetch` directly.
 */
import { GraphQLError } from 'graphql';
import {
  createYoga,
  maskError,
  useReadinessCheck,
  type YogaLogger,
  type YogaServerInstance,
} from 'graphql-yoga';
import { createContext, type GatewayContext, type RequestLimits } from './context.js';
import { upstreamErrorToGraphQL } from './errors.js';
import { useJit } from './plugins/jit.js';
import { useRequestBodyLimit } from './plugins/request-body-limit.js';
import { schema } from './schema/index.js';
import type { UpstreamClient } from './upstream/client.js';

export interface GatewayOptions {
  readonly client: UpstreamClient;
  readonly limits: RequestLimits;
  /** Upstream calls one request may have in flight at once. */
  readonly upstreamConcurrency: number;
  /** Headers GraphiQL pre-fills, e.g. the simulator's demo credentials. Never real ones. */
  readonly graphiqlHeaders?: Readonly<Record<string, string>>;
  /** Readiness: false while draining before shutdown. @default always ready */
  readonly isReady?: () => boolean;
  /** @default yoga's console logger */
  readonly logging?: boolean | YogaLogger;
}

export type Gateway = YogaServerInstance<Record<string, never>, GatewayContext>;

export const GRAPHQL_PATH = '/graphql';

export const DEFAULT_GRAPHIQL_QUERY = `# Every number the account owns, with its five latest messages.
# Credentials go in the Headers tab below.
query NumbersWithLatestMessages {
  ownedNumbers {
    tid
    number
    type
    webhook
    history(start: 0, end: 5) {
      totalCount
      mostRecentAt
      messages {
        sentAt
        direction
        phone
        body
        mms
        mediaUrl
        status { code text ok }
      }
    }
  }
}
`;

export function createGateway(options: GatewayOptions): Gateway {
  const isReady = options.isReady ?? (() => true);
  return createYoga<Record<string, never>, GatewayContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    healthCheckEndpoint: '/health',
    landingPage: false,
    // Enforced by useRequestBodyLimit (below) instead, at no cost when Content-Length is sent.
    maxRequestBodySize: false,
    logging: options.logging ?? true,
    context: ({ request }) =>
      createContext(request.headers, {
        client: options.client,
        limits: options.limits,
        upstreamConcurrency: options.upstreamConcurrency,
      }),
    maskedErrors: {
      // Upstream failures keep their safe message and stable code; anything else is masked.
      maskError(error, message, isDev) {
        const converted = error instanceof GraphQLError ? upstreamErrorToGraphQL(error) : null;
        return converted ?? maskError(error, message, isDev);
      },
    },
    graphiql: {
      title: 'SMS GraphQL gateway',
      defaultQuery: DEFAULT_GRAPHIQL_QUERY,
      headers: JSON.stringify(options.graphiqlHeaders ?? {}, null, 2),
      shouldPersistHeaders: false,
    },
    plugins: [
      useReadinessCheck({ endpoint: '/readiness', check: isReady }),
      useRequestBodyLimit(),
      useJit(),
    ],
  });
}

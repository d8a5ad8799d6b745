/**
 * createGateway() builds the yoga instance: schema, per-request context, error masking,
 * GraphiQL, health and readiness. It never listens; src/main.ts does, and tests call
 * `gateway.fetch` directly.
 */
import { GraphQLError } from 'graphql';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createYoga, maskError, useReadinessCheck, type YogaServerInstance } from 'graphql-yoga';
import type { ResponseCache } from './cache.js';
import type { GatewayLimits } from './config.js';
import { createContext, type GatewayContext } from './context.js';
import { upstreamErrorToGraphQL } from './errors.js';
import { queryLimitPlugins } from './limits.js';
import { yogaLogger, type Logger } from './logger.js';
import { schema } from './schema/index.js';
import type { UpstreamClient } from './upstream/client.js';

export interface GatewayOptions {
  readonly client: UpstreamClient;
  readonly limits: GatewayLimits;
  /** Headers GraphiQL pre-fills, e.g. the simulator's demo credentials. Never real ones. */
  readonly graphiqlHeaders?: Readonly<Record<string, string>>;
  /** Readiness: false while draining before shutdown. @default always ready */
  readonly isReady?: () => boolean;
  /** Where failures are logged; false for none. */
  readonly logger: Logger | false;
  /** The opt-in response cache (createResponseCache); none by default. */
  readonly responseCache?: ResponseCache | null;
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
  const { logger } = options;
  return createYoga<Record<string, never>, GatewayContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    healthCheckEndpoint: '/health',
    landingPage: false,
    // yoga logs every error it masks or converts (once, with its cause): see yogaLogger.
    // One operation per HTTP request: a JSON array body is refused, so limits hold per request.
    batching: false,
    // Counted as the body streams in, so chunked uploads are bounded too; 413 when exceeded.
    maxRequestBodySize: options.limits.maxBodyBytes,
    logging: logger ? yogaLogger(logger) : false,
    context: ({ request }) =>
      createContext(request.headers, { client: options.client, limits: options.limits }),
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
      // First: a cached answer skips parsing, the limits and execution (it passed them when stored).
      ...(options.responseCache ? [options.responseCache.plugin] : []),
      // @defer / @stream: a client can render the number list first and each history as it lands.
      useDeferStream(),
      ...queryLimitPlugins(options.limits),
      useReadinessCheck({ endpoint: '/readiness', check: isReady }),
    ],
  });
}

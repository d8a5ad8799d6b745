/**
 * createGateway() builds the yoga instance: schema, context, error masking, GraphiQL, health and
 * readiness. It never listens; src/runtime.ts does, and tests call `gateway.fetch` directly.
 */
import { GraphQLError } from 'graphql';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import {
  createYoga,
  maskError,
  type MaskError,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import type { ResponseCache } from '../cache/response-cache.js';
import type { GatewayLimits } from '../config/config.js';
import { createContext, type GatewayContext } from '../graph/context.js';
import { upstreamErrorToGraphQL } from '../core/errors.js';
import { Identities, type Identity, type Named } from '../core/identity.js';
import type { LiveHub } from '../live/hub.js';
import { yogaLogger, type Logger } from '../observability/logger.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { incrementalErrorMasking } from './plugins/incremental-errors.js';
import { queryLimitPlugins } from './plugins/query-limits.js';
import { apqPlugin, type APQStore } from './plugins/apq.js';
import type { PersistedPlugin } from './plugins/allow-list.js';
import { GRAPHQL_PATH } from './paths.js';
import { useRequestObserver, type Caller } from './plugins/observe-requests.js';
import { warningRollup, type WarningRollup } from '../observability/warning-rollup.js';
import type { Tracing } from '../observability/tracing.js';
import { useJit } from './plugins/jit.js';
import { useIncrementalFallback } from './plugins/incremental-fallback.js';
import { useKnownOperationTypes } from './plugins/known-operation-types.js';
import { useResponseCompression } from './plugins/compression.js';
import { useRequestBodyLimit } from './plugins/request-body-limit.js';
import { useStaticGraphiQL } from './graphiql.js';
import { useNoIntrospection } from './plugins/introspection.js';
import { useResponseCeiling } from './plugins/response-ceiling.js';
import { useAdmissionRefusals } from './plugins/admission-refusals.js';
import { useStreamSeats } from './plugins/stream-seats.js';
import { boundedDocumentCaches } from './document-cache.js';
import { useCors } from './cors.js';
import { useReadiness, type ReadinessReport } from './readiness.js';
import { issueTicket, ticketOf, type Ticketed } from '../traffic/ticket.js';
import type { TicketedListener } from '../traffic/admitted-requests.js';
import { queryLane, type LaneYoga, type QueryLaneOptions } from './query-lane.js';
import { createCursorCodec } from '../graph/cursors.js';
import { useLiveResume } from './plugins/live-resume.js';
import { useSseSingleConnection } from './plugins/sse-single-connection.js';
import { HeldStreams } from '../traffic/held-streams.js';
import { schema } from '../graph/schema.js';
import type { UpstreamClient } from '../core/upstream-client.js';
import type { Credentials } from '../core/credentials.js';

export interface GatewayOptions {
  readonly client: UpstreamClient;
  readonly limits: GatewayLimits;
  /** Headers GraphiQL pre-fills, e.g. the simulator's demo credentials. Never real ones. */
  readonly graphiqlHeaders?: Readonly<Record<string, string>>;
  /** Serve GraphiQL and answer introspection (GRAPHIQL). @default true */
  readonly graphiql?: boolean;
  /** What /readiness answers (src/http/readiness.ts). @default always ready */
  readonly readiness?: () => ReadinessReport;
  /** Where requests and failures are logged; false for none. */
  readonly logger: Logger | false;
  /** Where upstream failures are rolled up, shared with the traffic layer's retries. @default one over `logger` */
  readonly warnings?: WarningRollup | null;
  /** Collected when given; served at /metrics here unless `metricsEndpoint` is false. */
  readonly metrics?: GatewayMetrics | null;
  /** Serve /metrics on this server (false when METRICS_PORT serves it apart). @default true */
  readonly metricsEndpoint?: boolean;
  /** The allow-list plugin (plugins/allow-list.ts); none: any operation runs and APQ is accepted. */
  readonly persistedOperations?: PersistedPlugin | null;
  /** Where APQ keeps its hashes (Redis, shared by copies); this process's memory by default. */
  readonly apqStore?: APQStore | null;
  /** How credentials are named, for the ticket of a request handed to yoga in process. */
  readonly identities?: Identities;
  /** The service accepted this pair lately (no call made): only their APQ registrations are kept. */
  readonly accepted?: (identity: Named) => boolean;
  /** Browser origins allowed by CORS; none sends no CORS headers. */
  readonly corsOrigins?: readonly string[];
  /** Demo mode: with no CORS_ORIGINS, pages served from loopback (a Vite dev server) may call. */
  readonly allowLoopbackOrigins?: boolean;
  /** OpenTelemetry spans per operation when given. */
  readonly tracing?: Tracing | null;
  /** The opt-in response cache (createResponseCache); none by default. */
  readonly responseCache?: ResponseCache | null;
  /** Live subscriptions (Subscription.messageAdded); none turns them off. */
  readonly live?: LiveHub | null;
  /** graphql-sse's single connection mode: slots shared with WebSockets, verification, subscriptions. */
  readonly eventStreams?: {
    readonly held: HeldStreams;
    readonly verify: (credentials: Credentials) => Promise<boolean>;
    readonly maxOperationsPerStream: number;
  };
  /** GATEWAY_SECRET, which signs cursors and resume tokens; none: this process's random key. */
  readonly cursorKey?: string | null;
  /** GATEWAY_SECRET_PREVIOUS: cursors and resume tokens it signed are still accepted. */
  readonly previousCursorKey?: string | null;
}

/** yoga, and the Node listener to serve it with: the plain-query lane in front of yoga's own. */
export type Gateway = YogaServerInstance<Ticketed, GatewayContext> & {
  readonly listener: TicketedListener;
  /** The lane's options, for a lane built beside it (tests). */
  readonly lane: QueryLaneOptions;
};

export const DEFAULT_GRAPHIQL_QUERY = `# Your numbers and their five latest messages.
# Credentials: the Headers tab below.
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
    # The same messages as pages: pass pageInfo.endCursor back as \`after\` for the next one.
    messages(first: 3) {
      totalCount
      edges { cursor node { sentAt body } }
      pageInfo { hasNextPage endCursor }
    }
  }
}
`;

export function createGateway(options: GatewayOptions): Gateway {
  const identities = options.identities ?? new Identities(null);
  const readiness = options.readiness ?? (() => ({ ready: true }));
  const { logger } = options;
  // One rollup shared by the yoga logger (upstream failures) and the request observer.
  const warnings = options.warnings ?? (logger ? warningRollup(logger) : null);
  const yogaLog = logger ? yogaLogger(logger) : false;
  const cursors = createCursorCodec(options.cursorKey ?? null, options.previousCursorKey ?? null);
  const cors = useCors({
    origins: options.corsOrigins ?? [],
    allowLoopback: options.allowLoopbackOrigins ?? false,
  });
  const observer =
    logger || options.metrics
      ? useRequestObserver({
          logger,
          metrics: options.metrics ?? null,
          metricsEndpoint: options.metricsEndpoint ?? true,
          callerOf: (ticket) => callerOf(ticket.identity, options),
          warnings,
        })
      : null;
  const persisted =
    options.persistedOperations ??
    apqPlugin(options.apqStore, {
      onRequest: (result) => options.metrics?.apqRequest(result),
      keepsFor: ({ identity }) => {
        if (identity.kind !== 'present') return false;
        return options.accepted?.(identity) ?? true;
      },
    });
  const cache = options.responseCache ? [options.responseCache.plugin] : [];
  const yoga = createYoga<Ticketed, GatewayContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    healthCheckEndpoint: '/health',
    landingPage: false,
    // yoga logs every error it masks or converts (once, with its cause): see yogaLogger.
    // One operation per HTTP request: a JSON array body is refused, so limits hold per request.
    batching: false,
    // Enforced by useRequestBodyLimit (below) instead, at no cost when Content-Length is sent.
    maxRequestBodySize: false,
    logging: yogaLog,
    // Parsed documents, and the validation and compiled state that hangs off them, bounded by
    // their text rather than yoga's 1024 documents (src/http/document-cache.ts).
    parserAndValidationCache: boundedDocumentCaches(),
    // The server context becomes the operation's context: its `trace` is what tracing sets.
    context: (serverContext: Ticketed & Pick<GatewayContext, 'trace'>) => {
      const ticket = ticketOf(serverContext);
      return createContext(
        ticket.identity,
        { client: options.client, limits: options.limits, cursors, live: options.live ?? null },
        ticket.arrivedAt,
        () => serverContext.trace,
      );
    },
    maskedErrors: { maskError: maskGatewayError },
    // GraphiQL is served as static files by useStaticGraphiQL: yoga's page loads from unpkg.com.
    graphiql: false,
    // CORS is src/http/cors.ts: yoga's own answers a refused preflight with 405 and no reason.
    cors: false,
    plugins: [
      // First: a request handed to yoga in process gets its ticket (admitted-requests.ts's have).
      useTicket(identities),
      cors,
      // Before the body limit: a refused request's body is never read.
      useAdmissionRefusals(),
      useStreamSeats(),
      useRequestBodyLimit(options.limits.maxBodyBytes),
      ...(options.graphiql === false
        ? [useNoIntrospection()]
        : [
            useStaticGraphiQL({
              title: 'SMS GraphQL gateway',
              defaultQuery: DEFAULT_GRAPHIQL_QUERY,
              headers: JSON.stringify(options.graphiqlHeaders ?? {}, null, 2),
              shouldPersistHeaders: false,
            }),
          ]),
      useResponseCompression(),
      // graphql-sse's single connection mode (PUT, then a token per request); the rest is yoga's.
      useSseSingleConnection({
        held: new HeldStreams(1_000, 50),
        verify: () => Promise.resolve(true),
        maxOperationsPerStream: 20,
        ...options.eventStreams,
        live: options.live ?? null,
      }),
      useKnownOperationTypes(),
      // Before graphql-jit, which then compiles the document without @defer/@stream.
      useIncrementalFallback(),
      // Before graphql-jit, which rebuilds each error: thousands of lists left out become one first.
      useResponseCeiling(),
      // Before the plugins that wrap execution (tracing), so they wrap the compiled executor.
      useJit(),
      ...(observer ? [observer] : []),
      ...(options.tracing ? [options.tracing.plugin] : []),
      persisted,
      // After persisted operations: a cached answer skips parsing, limits and execution (passed).
      ...cache,
      // @defer / @stream: a client can render the number list first and each history as it lands.
      useDeferStream(),
      incrementalErrorMasking((error) => {
        const masked = maskGatewayError(error, 'Unexpected error.') as GraphQLError;
        if (masked !== error && yogaLog) yogaLog.error(error);
        return masked;
      }),
      ...queryLimitPlugins(options.limits, options.metrics ?? null),
      useReadiness(readiness),
      // Resume tokens in each live result and as the SSE event id; SSE ends so clients reconnect.
      useLiveResume(options.live ?? null),
    ],
  });
  // The lane runs what yoga would, in every configuration; these plugins' onRequest and
  // onResponse are the ones a query meets (the lane runs yoga's other hook lists itself).
  const lane: QueryLaneOptions = {
    maxBodyBytes: options.limits.maxBodyBytes,
    hooks: [cors, ...(observer ? [observer] : []), persisted, ...cache],
    persistedText: persisted.persistedText,
  };
  const listener = queryLane(yoga as unknown as LaneYoga, lane);
  return Object.assign(yoga, { listener, lane });
}

/** Issues the ticket of a request that came without one (ticket.ts). */
function useTicket(identities: Identities): Plugin<object, Ticketed> {
  return {
    onRequest({ request, serverContext }) {
      serverContext.ticket ??= issueTicket(identities, request.headers);
    },
  };
}

const ANONYMOUS: Caller = { trusted: () => false };

/** The request's account id and whether its credentials were accepted lately; never the secret. */
function callerOf(identity: Identity, options: GatewayOptions): Caller {
  if (identity.kind !== 'present') return ANONYMOUS;
  return { account: identity.account, trusted: () => options.accepted?.(identity) ?? true };
}

/** Upstream failures keep their safe message and stable code; anything else is masked. */
const maskGatewayError: MaskError = (error, message, isDev) => {
  const converted = error instanceof GraphQLError ? upstreamErrorToGraphQL(error) : null;
  return converted ?? withoutEcho(maskError(error, message, isDev));
};

/**
 * yoga puts the parser's own error in `extensions.originalError` (invalid JSON: "Unexpected
 * token ..., "<the body>" is not valid JSON"), which echoes the request body, credentials and
 * all, back to whoever sent it. The message and code say enough.
 */
function withoutEcho(error: Error): Error {
  if (error instanceof GraphQLError && error.extensions?.originalError !== undefined) {
    // yoga made this error for this request alone, so it is changed in place. Its 400 came from
    // the echo (an error with a cause is not "spec"-only); dropping `spec` keeps the 400.
    const extensions = error.extensions as Record<string, unknown>;
    delete extensions.originalError;
    const http = extensions.http as Record<string, unknown> | undefined;
    if (http) extensions.http = { ...http, spec: false };
  }
  return error;
}

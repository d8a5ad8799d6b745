/**
 * Everything the gateway records about each request, in one plugin: the request id on every
 * response (`x-request-id`, taken from the caller when it sends a plain one, and set for the
 * request's whole async work so upstream retries and failures logged meanwhile carry it), one
 * structured log line, and the GraphQL request metrics (src/observability/metrics.ts), served at
 * /metrics unless METRICS_PORT serves them apart. One plugin with one record per request, instead
 * of a logging plugin and yoga's Prometheus plugin each hooking every phase: what runs on every
 * request is what bounds the small query's throughput (docs/performance.md).
 *
 * A subscription is logged when it ends, not at its first byte: over SSE its request line waits
 * for the stream's end and carries its whole duration and the events delivered; over WebSocket
 * (no HTTP request per operation) a `subscription ended` line says the same. Both also log
 * `subscription started`.
 */
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../../observability/logger.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import { GRAPHQL_PATH } from '../paths.js';
import {
  REQUEST_ID_HEADER,
  requestIdFor,
  requestIdStorage,
} from '../../observability/request-id.js';

interface RequestRecord {
  readonly id: string;
  readonly startedAt: number;
  operation?: string;
  /** query, mutation or subscription, once it executes. */
  operationType?: string;
  /** Where the result's errors arose, if it has any. */
  errorPhase?: 'parse' | 'validate' | 'execute';
  subscription?: SubscriptionRecord;
  /** The request line, held back until the subscription it streams ends. */
  heldLine?: Record<string, unknown>;
}

interface SubscriptionRecord {
  readonly startedAt: number;
  events: number;
  ended: boolean;
}

const elapsedMs = (since: number): number => Math.round((performance.now() - since) * 10) / 10;

// Probes and scrapes are frequent and uninteresting: logged at debug only.
const QUIET_PATHS = new Set(['/health', '/readiness', '/metrics']);

interface OperationInfo {
  readonly name: string | undefined;
  readonly type: string;
}

/** The operation's name and type, found once per cached document (yoga reuses parsed documents). */
const operations = new WeakMap<DocumentNode, Map<string, OperationInfo>>();
function operationOf(document: DocumentNode, requested: string | null | undefined): OperationInfo {
  let byRequested = operations.get(document);
  if (!byRequested) operations.set(document, (byRequested = new Map()));
  const key = requested ?? '';
  let info = byRequested.get(key);
  if (!info) {
    const ast = getOperationAST(document, requested);
    info = { name: ast?.name?.value, type: ast?.operation ?? 'unknown' };
    byRequested.set(key, info);
  }
  return info;
}

const hasErrors = (result: unknown): boolean =>
  typeof result === 'object' &&
  result !== null &&
  Array.isArray((result as { errors?: unknown }).errors) &&
  (result as { errors: unknown[] }).errors.length > 0;

/** The path of an absolute request URL, without building a URL object for every request. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.slice(start).search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, start + end);
}

export interface RequestObserverOptions {
  /** Where the request lines go; false for none. */
  readonly logger: Logger | false;
  readonly metrics: GatewayMetrics | null;
  /** Serve /metrics on this server (false when METRICS_PORT serves it apart). @default true */
  readonly metricsEndpoint?: boolean;
}

export function useRequestObserver({
  logger,
  metrics,
  metricsEndpoint = true,
}: RequestObserverOptions): Plugin {
  const records = new WeakMap<Request, RequestRecord>();
  const recordOf = (context: unknown): RequestRecord | undefined => {
    const request = (context as { request?: Request }).request;
    return request ? records.get(request) : undefined;
  };
  return {
    instrumentation: {
      request({ request }, wrapped) {
        const record: RequestRecord = {
          id: requestIdFor(request.headers),
          startedAt: performance.now(),
        };
        records.set(request, record);
        return requestIdStorage.run(record.id, wrapped);
      },
    },
    onRequest({ request, url, endResponse }) {
      if (!metrics || !metricsEndpoint || url.pathname !== '/metrics') return undefined;
      if (request.method !== 'GET') return undefined;
      return metrics
        .exposition()
        .then(({ contentType, body }) =>
          endResponse(new Response(body, { headers: { 'content-type': contentType } })),
        );
    },
    onParse({ context }) {
      return ({ result }) => {
        if (result instanceof Error) {
          const record = recordOf(context);
          if (record) record.errorPhase = 'parse';
        }
      };
    },
    onValidate({ context, params }) {
      return ({ valid }) => {
        if (valid) return;
        const record = recordOf(context);
        if (!record) return;
        record.errorPhase = 'validate';
        // Refused before it ran: named from the document, so its errors count under its name.
        const requested = (context as { params?: { operationName?: string | null } }).params;
        record.operation = operationOf(params.documentAST, requested?.operationName).name;
      };
    },
    onExecute({ args }) {
      const record = recordOf(args.contextValue);
      if (!record) return undefined;
      const info = operationOf(args.document, args.operationName);
      record.operation = info.name;
      record.operationType = info.type;
      return {
        onExecuteDone({ result }) {
          if (hasErrors(result)) record.errorPhase = 'execute';
        },
      };
    },
    onSubscribe({ args }) {
      const record = recordOf(args.contextValue);
      const info = operationOf(args.document, args.operationName);
      const operation = info.name;
      if (record) record.operationType = info.type;
      const subscription: SubscriptionRecord = {
        startedAt: performance.now(),
        events: 0,
        ended: false,
      };
      if (record) record.operation = operation;
      const transport = record ? 'sse' : 'websocket';
      const about = {
        ...(record ? { requestId: record.id } : {}),
        transport,
        ...(operation ? { operation } : {}),
      };
      return {
        onSubscribeResult({ result }) {
          // A subscription refused before it started (bad input, limits) is a plain request.
          if (!(Symbol.asyncIterator in (result as object))) return undefined;
          if (record) record.subscription = subscription;
          if (logger) logger.info(about, 'subscription started');
          return {
            onNext() {
              subscription.events += 1;
            },
            onEnd() {
              subscription.ended = true;
              const ended = {
                ...about,
                durationMs: elapsedMs(subscription.startedAt),
                events: subscription.events,
              };
              if (logger) logger.info(ended, 'subscription ended');
              // Over SSE, the request line held back at the first byte goes out now, whole.
              if (logger && record?.heldLine) {
                logger.info(
                  {
                    ...record.heldLine,
                    durationMs: elapsedMs(record.startedAt),
                    events: ended.events,
                  },
                  'request',
                );
                record.heldLine = undefined;
              }
            },
          };
        },
      };
    },
    onResponse({ request, response }) {
      const record = records.get(request);
      if (!record) return;
      response.headers.set(REQUEST_ID_HEADER, record.id);
      const path = pathOf(request.url);
      if (metrics && path === GRAPHQL_PATH) {
        const seconds = (performance.now() - record.startedAt) / 1000;
        metrics.httpDone(request.method, response.status, seconds);
        if (record.operationType !== undefined || record.errorPhase !== undefined) {
          metrics.operationDone({
            type: record.operationType ?? 'unknown',
            name: record.operation,
            seconds,
            ...(record.errorPhase ? { errorPhase: record.errorPhase } : {}),
          });
        }
      }
      if (!logger) return;
      const line = {
        requestId: record.id,
        method: request.method,
        path,
        status: response.status,
        durationMs: elapsedMs(record.startedAt),
        ...(record.operation ? { operation: record.operation } : {}),
      };
      if (record.subscription && !record.subscription.ended) {
        record.heldLine = line;
        return;
      }
      if (QUIET_PATHS.has(path)) logger.debug(line, 'request');
      else logger.info(line, 'request');
    },
  };
}

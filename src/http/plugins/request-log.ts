/**
 * One structured log line per request, and a request id on every response (`x-request-id`,
 * taken from the caller when it sends a plain one). The id is set for the whole request's async
 * work, so upstream retries and failures logged meanwhile carry it too.
 *
 * A subscription is logged when it ends, not at its first byte: over SSE its request line waits
 * for the stream's end and carries its whole duration and the events delivered; over WebSocket
 * (no HTTP request per operation) a `subscription ended` line says the same. Both also log
 * `subscription started`.
 */
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../../observability/logger.js';
import {
  REQUEST_ID_HEADER,
  requestIdFor,
  requestIdStorage,
} from '../../observability/request-id.js';

interface RequestRecord {
  readonly id: string;
  readonly startedAt: number;
  operation?: string;
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

/** The operation's name, found once per cached document (yoga reuses parsed documents). */
const operationNames = new WeakMap<DocumentNode, Map<string, string | undefined>>();
function operationNameOf(document: DocumentNode, requested: string | null | undefined) {
  let byRequested = operationNames.get(document);
  if (!byRequested) operationNames.set(document, (byRequested = new Map()));
  const key = requested ?? '';
  if (!byRequested.has(key))
    byRequested.set(key, getOperationAST(document, requested)?.name?.value);
  return byRequested.get(key);
}

/** The path of an absolute request URL, without building a URL object for every request. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.slice(start).search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, start + end);
}

export function requestLogPlugin(logger: Logger): Plugin {
  const records = new WeakMap<Request, RequestRecord>();
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
    onExecute({ args }) {
      const record = records.get((args.contextValue as { request: Request }).request);
      if (record) record.operation = operationNameOf(args.document, args.operationName);
    },
    onSubscribe({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      const record = request ? records.get(request) : undefined;
      const operation = operationNameOf(args.document, args.operationName);
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
          logger.info(about, 'subscription started');
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
              logger.info(ended, 'subscription ended');
              // Over SSE, the request line held back at the first byte goes out now, whole.
              if (record?.heldLine) {
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

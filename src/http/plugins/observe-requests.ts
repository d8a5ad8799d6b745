/**
 * One record per request (docs/observability.md): request id, log line (a subscription's at its
 * end), metrics, upstream failures. Kept on the request's ticket, not in AsyncLocalStorage
 * (docs/performance.md).
 */
import { getOperationAST, parse, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { requestLineLogger, type Logger } from '../../observability/logger.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import { outcomeOf } from '../../observability/outcome.js';
import {
  HeldWarnings,
  upstreamWarnings,
  type WarningRollup,
} from '../../observability/warning-rollup.js';
import { GRAPHQL_PATH, PROBE_PATHS } from '../paths.js';
import { REQUEST_ID_HEADER, requestIdFor } from '../../observability/request-id.js';
import { ticketOf, type RequestRecord, type Ticket, type Ticketed } from '../../traffic/ticket.js';

const elapsedMs = (since: number): number => Math.round((performance.now() - since) * 10) / 10;

type OperationInfo = { readonly name: string | undefined; readonly type: string };

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

/** An answer from the response cache is named as asked, else as its text ran here, else parsed. */
const MAX_NAMED_TEXT_CHARS = 256 * 1024;

function operationOfText(text: string, requested: string | null | undefined): OperationInfo {
  try {
    return operationOf(parse(text, { noLocation: true }), requested);
  } catch {
    return { name: undefined, type: 'unknown' };
  }
}

/** The path of an absolute request URL, without building a URL object for every request. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.slice(start).search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, start + end);
}

/** Who sent a request, as far as logs and metrics may say. */
export interface Caller {
  /** The pseudonymous account id (a keyed hash of the sys_id); none without credentials. */
  readonly account?: string;
  /** The service accepted these credentials lately: its operation names may become labels. */
  readonly trusted: () => boolean;
}

export interface RequestObserverOptions {
  readonly logger: Logger | false;
  readonly metrics: GatewayMetrics | null;
  /** Serve /metrics on this server (false when METRICS_PORT serves it apart). @default true */
  readonly metricsEndpoint?: boolean;
  /** Who sent the request, asked when it ends. @default anonymous and trusted */
  readonly callerOf?: (ticket: Ticket) => Caller;
  /** Where upstream failures are rolled up (the yoga logger's); none writes none. */
  readonly warnings?: WarningRollup | null;
}

const UNKNOWN_CALLER: Caller = { trusted: () => true };

export function useRequestObserver({
  logger: parentLogger,
  metrics,
  metricsEndpoint = true,
  callerOf = () => UNKNOWN_CALLER,
  warnings = null,
}: RequestObserverOptions): Plugin {
  const logger = parentLogger && requestLineLogger(parentLogger);
  const namesByText = new LRUCache<string, OperationInfo>({
    max: 500,
    maxSize: MAX_NAMED_TEXT_CHARS,
    maxEntrySize: MAX_NAMED_TEXT_CHARS,
    sizeCalculation: (_info, text) => Math.max(1, text.length),
  });
  /** Made at the first hook that asks, kept on the ticket (without one: a record of its own). */
  const recordFor = (request: Request, serverContext: Ticketed): RequestRecord => {
    const { ticket } = serverContext;
    if (ticket?.logged) return ticket.logged;
    const id = requestIdFor(request.headers);
    const record: RequestRecord = {
      id,
      startedAt: ticket?.arrivedAt || performance.now(),
      ...(warnings ? { warnings: new HeldWarnings(warnings, id) } : {}),
    };
    if (ticket) ticket.logged = record;
    return record;
  };
  // An HTTP request's (a WebSocket operation's ticket is its connection's, and holds none).
  const recordOf = (context: unknown): RequestRecord | undefined => ticketOf(context).logged;
  /** Holds a result's upstream failures with its request's, or rolls them up now (WebSocket). */
  const observeFailures = (record: RequestRecord | undefined, result: unknown): void => {
    if (!warnings) return;
    for (const warning of upstreamWarnings(result)) {
      if (record?.warnings) record.warnings.hold(warning);
      else warnings.warn(warning);
    }
  };
  return {
    onRequest({ request, url, endResponse, serverContext }) {
      recordFor(request, serverContext as Ticketed);
      if (!metrics || !metricsEndpoint || url.pathname !== '/metrics') return undefined;
      if (request.method !== 'GET') return undefined;
      return metrics
        .exposition()
        .then(({ contentType, body }) =>
          endResponse(new Response(body, { headers: { 'content-type': contentType } })),
        );
    },
    onParams({ context, params }) {
      const record = recordOf(context);
      if (record) record.params = params;
    },
    onParse({ context }) {
      return ({ result }) => {
        const record = result instanceof Error ? recordOf(context) : undefined;
        if (record) record.errorPhase = 'parse';
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
      if (record) {
        const info = operationOf(args.document, args.operationName);
        record.operation = info.name;
        record.operationType = info.type;
        record.validated = true;
        const text = record.params?.query;
        if (text !== undefined && !namesByText.has(text)) namesByText.set(text, info);
      }
      return {
        onExecuteDone({ result }) {
          // An incremental (@defer, @stream) result's errors come in its later parts.
          if (Symbol.asyncIterator in result) {
            return { onNext: ({ result: part }) => observeFailures(record, part) };
          }
          if (record && result.errors?.length) record.errorPhase = 'execute';
          observeFailures(record, result);
          return undefined;
        },
      };
    },
    onSubscribe({ args }) {
      const record = recordOf(args.contextValue);
      const { name: operation, type } = operationOf(args.document, args.operationName);
      if (record) {
        record.operation = operation;
        record.operationType = type;
        record.validated = true;
      }
      const subscription = { startedAt: performance.now(), events: 0, ended: false };
      const about = {
        ...(record ? { requestId: record.id } : {}),
        transport: record ? 'sse' : 'websocket',
        ...(operation ? { operation } : {}),
      };
      return {
        onSubscribeResult({ result }) {
          // A subscription refused before it started (bad input, limits) is a plain request.
          if (!(Symbol.asyncIterator in (result as object))) return undefined;
          if (record) record.subscription = subscription;
          if (logger) logger.info(about, 'subscription started');
          return {
            onNext({ result: event }) {
              subscription.events += 1;
              observeFailures(record, event);
            },
            onEnd() {
              subscription.ended = true;
              const { events } = subscription;
              if (!logger) return;
              const durationMs = elapsedMs(subscription.startedAt);
              logger.info({ ...about, durationMs, events }, 'subscription ended');
              // Over SSE, the request line held back at the first byte goes out now, whole.
              if (!record?.heldLine) return;
              logger.info(
                { ...record.heldLine, durationMs: elapsedMs(record.startedAt), events },
                'request',
              );
              record.heldLine = undefined;
            },
          };
        },
      };
    },
    onResultProcess({ serverContext, result }) {
      const record = recordOf(serverContext);
      if (!record) return;
      record.outcome = outcomeOf(result);
      if (!ticketOf(serverContext).cache?.hit) return;
      // Stored after it validated and ran for the very same credentials: named like it.
      record.cached = true;
      record.validated = true;
      const requested = record.params?.operationName;
      const text = record.params?.query ?? '';
      record.operation =
        requested || (namesByText.get(text) ?? operationOfText(text, requested)).name;
    },
    onResponse({ request, response, serverContext }) {
      const record = recordFor(request, serverContext as Ticketed);
      response.headers.set(REQUEST_ID_HEADER, record.id);
      const path = pathOf(request.url);
      const graphql = path === GRAPHQL_PATH && record.outcome !== undefined;
      const ticket = ticketOf(serverContext);
      const caller = graphql ? callerOf(ticket) : UNKNOWN_CALLER;
      record.warnings?.release(caller.account);
      if (metrics && path === GRAPHQL_PATH) {
        const seconds = (performance.now() - record.startedAt) / 1000;
        metrics.httpDone(request.method, response.status, seconds);
        metrics.admissionWaited(ticket.waitedMs / 1000);
        // Plain objects of one shape: spreading them here was a twentieth of a small query's CPU.
        const name = record.operation;
        const validated = record.validated === true;
        const trusted = caller.trusted;
        if (record.operationType !== undefined || record.errorPhase !== undefined) {
          const type = record.operationType ?? 'unknown';
          const errorPhase = record.errorPhase;
          metrics.operationDone({ name, validated, trusted, type, seconds, errorPhase });
        }
        if (record.outcome) {
          const { outcome, code } = record.outcome;
          const cached = record.cached === true;
          metrics.requestDone({ name, validated, trusted, outcome, code, cached });
        }
      }
      if (!logger) return;
      // One shape for every line (pino leaves out the fields that are undefined). Every GraphQL
      // answer names its outcome, `ok`/`none` too: a count of lines by outcome needs all of them.
      const line = {
        requestId: record.id,
        method: request.method,
        path,
        status: response.status,
        durationMs: elapsedMs(record.startedAt),
        waitedMs: ticket.waitedMs >= 1 ? Math.round(ticket.waitedMs) : undefined,
        operation: record.operation || undefined,
        account: caller.account || undefined,
        outcome: record.outcome?.outcome,
        code: record.outcome?.code,
        cached: record.cached || undefined,
      };
      if (record.subscription && !record.subscription.ended) {
        record.heldLine = line;
        return;
      }
      if (PROBE_PATHS.has(path)) logger.debug(line, 'request');
      else logger.info(line, 'request');
    },
  };
}

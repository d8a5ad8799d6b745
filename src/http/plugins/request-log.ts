/**
 * One structured log line per request, and a request id on every response (`x-request-id`,
 * taken from the caller when it sends a plain one). The id is set for the whole request's async
 * work, so upstream retries and failures logged meanwhile carry it too.
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
}

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
        durationMs: Math.round((performance.now() - record.startedAt) * 10) / 10,
        ...(record.operation ? { operation: record.operation } : {}),
      };
      if (QUIET_PATHS.has(path)) logger.debug(line, 'request');
      else logger.info(line, 'request');
    },
  };
}

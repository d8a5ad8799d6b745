/**
 * OpenTelemetry tracing, opt-in: with OTEL_EXPORTER_OTLP_ENDPOINT set, each GraphQL operation
 * becomes a server span (@envelop/opentelemetry) and each upstream attempt a client span under
 * it, exported over OTLP/HTTP (JSON). Spans carry the operation and outcome, never headers,
 * variables or upstream parameters, so no credential can reach a trace. The operation span names
 * the operation and a SHA-256 of the document's text (`graphql.document.hash`, the same hash an
 * APQ client sends), never the text itself: inline arguments could be a phone number. Every
 * span names its copy (`service.instance.id`) and version (`service.version`).
 *
 * A caller's W3C trace context (`traceparent`, `tracestate`; a federation router sends them) is
 * continued: the operation span becomes a child of the caller's span, in the caller's trace, and
 * upstream calls carry the context on (src/upstream/client.ts).
 */
import { createHash } from 'node:crypto';
import { propagation, ROOT_CONTEXT, SpanKind, trace, type TextMapGetter } from '@opentelemetry/api';
import {
  getCurrentOtelContext,
  setCurrentOtelContext,
  useOpenTelemetry,
} from '@envelop/opentelemetry';
import { print, type DocumentNode } from 'graphql';
import { defaultInstanceId } from '../config/config.js';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Plugin } from 'graphql-yoga';

export const SERVICE_NAME = 'sms-graphql-gateway';

export interface Tracing {
  readonly plugin: Plugin;
  /** Sends what is buffered; for tests and shutdown. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** `endpoint` is the collector's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); traces go to /v1/traces. */
export function startTracing(
  endpoint: URL,
  identity: { readonly instanceId?: string; readonly version?: string } = {},
): Tracing {
  const exporter = new OTLPTraceExporter({ url: new URL('v1/traces', withSlash(endpoint)).href });
  const provider = new NodeTracerProvider({
    resource: new Resource({
      'service.name': SERVICE_NAME,
      'service.instance.id': identity.instanceId ?? defaultInstanceId(),
      'service.version': identity.version ?? 'unknown',
    }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // Registers the async-context manager too, so upstream spans nest under their operation, and
  // the W3C trace-context propagator that reads and writes `traceparent`.
  provider.register();
  const operationSpans = useOpenTelemetry(
    { document: false, variables: false, result: false, resolvers: false },
    provider,
    SpanKind.SERVER,
    {},
    SERVICE_NAME,
  ) as Plugin;
  const plugin: Plugin = {
    onPluginInit({ addPlugin }) {
      // In this order: the caller's context is in place before the operation span starts.
      addPlugin(continueCallerTrace);
      addPlugin(operationSpans);
      addPlugin(documentAttributes);
    },
  };
  return { plugin, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * Hands @envelop/opentelemetry the trace context of the request's headers as the parent of its
 * operation span. Without a (valid) `traceparent` that is the root context: a fresh trace.
 */
const continueCallerTrace: Plugin = {
  onExecute({ args }) {
    startFromCaller(args.contextValue);
  },
  onSubscribe({ args }) {
    startFromCaller(args.contextValue);
  },
};

function startFromCaller(contextValue: unknown): void {
  const request = (contextValue as { request?: Request }).request;
  if (!request) return;
  setCurrentOtelContext(
    contextValue as object,
    propagation.extract(ROOT_CONTEXT, request.headers, headerGetter),
  );
}

/** The hash of each parsed document, computed once (yoga reuses parsed documents). */
const documentHashes = new WeakMap<DocumentNode, string>();
function documentHash(document: DocumentNode): string {
  let hash = documentHashes.get(document);
  if (hash === undefined) {
    const text = document.loc?.source.body ?? print(document);
    hash = createHash('sha256').update(text).digest('hex');
    documentHashes.set(document, hash);
  }
  return hash;
}

/**
 * Runs after @envelop/opentelemetry has opened the operation span: adds the semantic-convention
 * operation name and the document's hash to it.
 */
const documentAttributes: Plugin = {
  onExecute({ args }) {
    annotate(args.contextValue as object, args.document, args.operationName);
  },
  onSubscribe({ args }) {
    annotate(args.contextValue as object, args.document, args.operationName);
  },
};

function annotate(
  contextValue: object,
  document: DocumentNode,
  requested: string | null | undefined,
): void {
  const span = trace.getSpan(getCurrentOtelContext(contextValue));
  if (!span) return;
  const operation = document.definitions.find(
    (d) => d.kind === 'OperationDefinition' && (!requested || d.name?.value === requested),
  );
  const name = operation && 'name' in operation ? operation.name?.value : undefined;
  span.setAttribute('graphql.operation.name', name ?? 'anonymous');
  span.setAttribute('graphql.document.hash', documentHash(document));
}

function withSlash(url: URL): URL {
  return url.pathname.endsWith('/') ? url : new URL(`${url.href}/`);
}

/**
 * OpenTelemetry tracing, opt-in (docs/observability.md). Spans never carry headers, variables or
 * upstream parameters, nor the document's text (inline arguments could be a phone number): only
 * its SHA-256, `graphql.document.hash`.
 */
import { createHash } from 'node:crypto';
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Context,
  type TextMapGetter,
} from '@opentelemetry/api';
import {
  getCurrentOtelContext,
  setCurrentOtelContext,
  useOpenTelemetry,
} from '@envelop/opentelemetry';
import { print, type DocumentNode } from 'graphql';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Plugin } from 'graphql-yoga';

const SERVICE_NAME = 'sms-graphql-gateway';

export type Tracing = ReturnType<typeof startTracing>;

/** `endpoint` is the collector's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); traces go to /v1/traces. */
export function startTracing(
  endpoint: URL,
  identity: { readonly instanceId: string; readonly version: string },
) {
  const base = endpoint.pathname.endsWith('/') ? endpoint : new URL(`${endpoint.href}/`);
  const exporter = new OTLPTraceExporter({ url: new URL('v1/traces', base).href });
  const provider = new BasicTracerProvider({
    resource: new Resource({
      'service.name': SERVICE_NAME,
      'service.instance.id': identity.instanceId,
      'service.version': identity.version,
    }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // Registers the W3C trace-context propagator that reads and writes `traceparent`, and no
  // async-context manager: the operation's context travels on its GraphQL context to the calls
  // it makes (GatewayContext.trace). Node 20's AsyncLocalStorage hooks every promise: with it, a
  // copy tracing 1% of its operations kept 0.54x of an untraced one's req/s, without it 0.85x.
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
      // In this order: the caller's context is in place before the operation span starts, and the
      // span is open when its attributes are added.
      addPlugin(onOperation(continueCallerTrace));
      addPlugin(operationSpans);
      addPlugin(onOperation(addDocumentAttributes));
      addPlugin(onOperation(handDownTrace));
    },
  };
  // flush sends what is buffered (tests, shutdown).
  return { plugin, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

interface OperationArgs {
  readonly contextValue: unknown;
  readonly document: DocumentNode;
  readonly operationName?: string | null;
}

function onOperation(run: (args: OperationArgs) => void): Plugin {
  return { onExecute: ({ args }) => run(args), onSubscribe: ({ args }) => run(args) };
}

/** The request's `traceparent` becomes the operation span's parent (none: a fresh trace). */
function continueCallerTrace({ contextValue }: OperationArgs): void {
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

/** The operation span's context, for the calls the operation makes (see GatewayContext.trace). */
function handDownTrace({ contextValue }: OperationArgs): void {
  (contextValue as { trace?: Context }).trace = getCurrentOtelContext(contextValue as object);
}

/** The operation span's semantic-convention operation name and the document's hash. */
function addDocumentAttributes({ contextValue, document, operationName }: OperationArgs): void {
  const span = trace.getSpan(getCurrentOtelContext(contextValue as object));
  if (!span) return;
  const operation = document.definitions.find(
    (d) => d.kind === 'OperationDefinition' && (!operationName || d.name?.value === operationName),
  );
  const name = operation && 'name' in operation ? operation.name?.value : undefined;
  span.setAttribute('graphql.operation.name', name ?? 'anonymous');
  span.setAttribute('graphql.document.hash', documentHash(document));
}

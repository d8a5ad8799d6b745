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
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import {
  getOperationAST,
  print,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

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
  const plugin = operationSpans(provider.getTracer(SERVICE_NAME));
  // flush sends what is buffered (tests, shutdown).
  return { plugin, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

/**
 * One span per operation, named `<type>.<name>` with @envelop/opentelemetry's attributes and ours
 * (hand-written: that plugin wraps execution in an async context this gateway no longer keeps,
 * and with the caller's trace, the attributes and the hand-down took four hooks a request). Its
 * parent is the caller's `traceparent`; its context is handed down on the operation's context.
 */
function operationSpans(tracer: Tracer): Plugin {
  const start = ({ contextValue, document, operationName }: ExecutionArgs): Span | null => {
    const operation = getOperationAST(document, operationName);
    if (!operation) return null;
    const request = (contextValue as { request?: Request }).request;
    const parent = request
      ? propagation.extract(ROOT_CONTEXT, request.headers, headerGetter)
      : ROOT_CONTEXT;
    const name = operation.name?.value ?? 'anonymous';
    const span = tracer.startSpan(
      `${operation.operation}.${name}`,
      { kind: SpanKind.SERVER },
      parent,
    );
    // Attributes only for the spans kept (1 in 100 at 1% sampling): a span sampled out drops them,
    // after the SDK has copied and checked each one (none of the samplers OTEL_TRACES_SAMPLER names
    // reads them). The hash is worked out only for those too.
    if (span.isRecording()) {
      span.setAttributes({
        'graphql.execute.operationName': name,
        'graphql.execute.operationType': operation.operation,
        // The semantic convention's name.
        'graphql.operation.name': name,
        'graphql.document.hash': documentHash(document),
      });
    }
    (contextValue as { trace?: Context }).trace = trace.setSpan(parent, span);
    return span;
  };
  /** What the span sees of each result; an async iterable's parts, then its end. */
  const follow = (span: Span, result: unknown) => {
    if (!isAsyncIterable(result)) {
      markError(span, result as ExecutionResult);
      span.end();
      return undefined;
    }
    return {
      onNext: ({ result: part }: { result: ExecutionResult }) => markError(span, part),
      onEnd: () => span.end(),
    };
  };
  return {
    onExecute({ args }) {
      const span = start(args);
      return span ? { onExecuteDone: ({ result }) => follow(span, result) } : undefined;
    },
    onSubscribe({ args }) {
      const span = start(args);
      if (!span) return undefined;
      return {
        onSubscribeResult: ({ result }) => follow(span, result),
        onSubscribeError: () => {
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
  };
}

/** As @envelop/opentelemetry marks an operation that answered errors. */
function markError(span: Span, result: ExecutionResult | undefined): void {
  if (!result?.errors?.length) return;
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.recordException({ name: 'graphql.execute.error', message: JSON.stringify(result.errors) });
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

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

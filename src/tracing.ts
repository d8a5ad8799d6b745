/**
 * OpenTelemetry tracing, opt-in: with OTEL_EXPORTER_OTLP_ENDPOINT set, each GraphQL operation
 * becomes a server span (@envelop/opentelemetry) and each upstream attempt a client span under
 * it, exported over OTLP/HTTP (JSON). Spans carry the operation and outcome, never headers,
 * variables or upstream parameters, so no credential can reach a trace.
 */
import { SpanKind } from '@opentelemetry/api';
import { useOpenTelemetry } from '@envelop/opentelemetry';
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
export function startTracing(endpoint: URL): Tracing {
  const exporter = new OTLPTraceExporter({ url: new URL('v1/traces', withSlash(endpoint)).href });
  const provider = new NodeTracerProvider({
    resource: new Resource({ 'service.name': SERVICE_NAME }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // Registers the async-context manager too, so upstream spans nest under their operation.
  provider.register();
  const plugin = useOpenTelemetry(
    { document: true, variables: false, result: false, resolvers: false },
    provider,
    SpanKind.SERVER,
    {},
    SERVICE_NAME,
  ) as Plugin;
  return { plugin, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

function withSlash(url: URL): URL {
  return url.pathname.endsWith('/') ? url : new URL(`${url.href}/`);
}

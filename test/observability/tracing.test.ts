/**
 * Opt-in OpenTelemetry: spans reach an OTLP/HTTP receiver on loopback, upstream attempts nest
 * under their GraphQL operation, no span carries a credential, and a caller's W3C trace context
 * is continued (and passed on to the service).
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_CREDENTIALS,
  startSimulator,
  type RunningSimulator,
} from '../../src/simulator/index.js';
import { startTracing, type Tracing } from '../../src/observability/tracing.js';
import {
  basicAuth,
  createTestGateway,
  execute,
  executeText,
  type TestGateway,
} from '../fixtures/harness.js';
import { EveryHistoryQuery } from '../fixtures/operations.js';

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

let receiver: Server;
const exports: string[] = [];
let simulator: RunningSimulator;
let tracing: Tracing;
let test: TestGateway;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/otel/v1/traces') exports.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  tracing = startTracing(new URL(`http://127.0.0.1:${port}/otel`), {
    instanceId: 'gw-trace-3',
    version: '1.2.3',
  });
  simulator = await startSimulator();
  // Live updates on, for a subscription's span.
  test = createTestGateway(simulator.url, { tracing, live: { pollMs: 60_000 } });
});
afterAll(async () => {
  await tracing.shutdown();
  // startTracing registers OpenTelemetry's globals (provider, context manager, propagator); the
  // next test file in this worker shares the module cache, so it must not inherit them.
  trace.disable();
  context.disable();
  propagation.disable();
  await test.close();
  await simulator.close();
  receiver.close();
});

function exportedSpans(): OtlpSpan[] {
  return exports.flatMap((text) =>
    (
      JSON.parse(text) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }
    ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
  );
}

/** The spans of the one operation named `name` (spans of other tests are told apart by name). */
async function traceOf(name: string): Promise<{ operation: OtlpSpan; upstream: OtlpSpan[] }> {
  await tracing.flush();
  const operation = exportedSpans().find((s) => s.name === name);
  if (!operation) throw new Error(`no span ${name}`);
  const upstream = exportedSpans().filter(
    (s) => s.name.startsWith('sms.upstream ') && s.parentSpanId === operation.spanId,
  );
  return { operation, upstream };
}

describe('tracing', () => {
  it('exports the operation span with one child span per upstream attempt, and no secrets', async () => {
    const { body } = await execute(
      test.gateway,
      EveryHistoryQuery,
      { start: 0, end: 1 },
      basicAuth(DEMO_CREDENTIALS),
    );
    expect(body.errors).toBeUndefined();
    await tracing.flush();
    const spans = exports.flatMap((text) =>
      (
        JSON.parse(text) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }
      ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
    );
    const operation = spans.find((s) => s.name === 'query.EveryHistory');
    expect(operation).toBeDefined();
    const upstream = spans.filter((s) => s.name.startsWith('sms.upstream '));
    expect(upstream.map((s) => s.name).sort()).toEqual([
      'sms.upstream allownednumbers',
      ...Array<string>(7).fill('sms.upstream smshistory'),
    ]);
    for (const span of upstream) {
      expect(span.traceId).toBe(operation?.traceId);
      expect(span.attributes).toContainEqual({ key: 'sms.outcome', value: { stringValue: 'ok' } });
    }
    const raw = exports.join('\n');
    expect(raw).not.toContain(DEMO_CREDENTIALS.authToken);
    expect(raw).not.toContain(
      Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64'),
    );
  });

  it('names the copy, the operation and a hash of the document, never its text', async () => {
    const query = 'query HashedOne { number(tid: "TN-secret-looking-9") { tid } }';
    const { body } = await executeText(test.gateway, query, undefined, basicAuth(DEMO_CREDENTIALS));
    expect(body.errors).toBeUndefined();
    const { operation } = await traceOf('query.HashedOne');
    const attribute = (key: string) => operation.attributes.find((a) => a.key === key)?.value;
    expect(attribute('graphql.operation.name')).toEqual({ stringValue: 'HashedOne' });
    expect(attribute('graphql.document.hash')).toEqual({
      stringValue: createHash('sha256').update(query).digest('hex'),
    });
    const raw = exports.join('\n');
    expect(raw).not.toContain('TN-secret-looking-9');
    expect(raw).not.toContain('HashedOne { number');
    // Nor any other document's text (EveryHistory, run above, has no inline argument).
    expect(raw).not.toContain('graphql.execute.document');
    const resources = exports.flatMap((text) =>
      (JSON.parse(text) as { resourceSpans: { resource: OtlpSpan }[] }).resourceSpans.map(
        (r) => r.resource.attributes,
      ),
    );
    for (const attributes of resources) {
      expect(attributes).toContainEqual({
        key: 'service.instance.id',
        value: { stringValue: 'gw-trace-3' },
      });
      expect(attributes).toContainEqual({
        key: 'service.version',
        value: { stringValue: '1.2.3' },
      });
    }
  });

  it("continues the caller's W3C trace: the operation span is a child of its traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpanId = '00f067aa0ba902b7';
    const { body } = await executeText(
      test.gateway,
      'query FromRouter { ownedNumbers { tid } }',
      undefined,
      {
        ...basicAuth(DEMO_CREDENTIALS),
        traceparent: `00-${traceId}-${callerSpanId}-01`,
        tracestate: 'router=1',
      },
    );
    expect(body.errors).toBeUndefined();
    const { operation, upstream } = await traceOf('query.FromRouter');
    expect(operation.traceId).toBe(traceId);
    expect(operation.parentSpanId).toBe(callerSpanId);
    expect(upstream.map((s) => s.traceId)).toEqual([traceId]);
  });

  it('starts a fresh trace without a traceparent, or with one that is not valid', async () => {
    await executeText(
      test.gateway,
      'query Untraced { ownedNumbers { tid } }',
      undefined,
      basicAuth(DEMO_CREDENTIALS),
    );
    await executeText(test.gateway, 'query BadParent { ownedNumbers { tid } }', undefined, {
      ...basicAuth(DEMO_CREDENTIALS),
      traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    });
    for (const name of ['query.Untraced', 'query.BadParent']) {
      const { operation, upstream } = await traceOf(name);
      expect(operation.parentSpanId ?? '').toBe('');
      expect(operation.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(operation.traceId).not.toBe('00000000000000000000000000000000');
      expect(upstream).toHaveLength(1);
    }
  });

  it('marks an operation that answered errors, and spans a subscription without its text', async () => {
    const { body } = await executeText(
      test.gateway,
      'query Failing { ownedNumbers { tid } }',
      undefined,
      { 'x-sys-id': 'SYS_NOBODY', 'x-auth-token': 'not-a-token' },
    );
    expect(body.errors?.length).toBeGreaterThan(0);
    const { operation: failing } = await traceOf('query.Failing');
    expect((failing as OtlpSpan & { status?: { code?: number } }).status?.code).toBe(2);

    const response = await test.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...basicAuth(DEMO_CREDENTIALS),
      },
      body: JSON.stringify({ query: 'subscription Arrivals { messageAdded { body } }' }),
    });
    expect(response.status).toBe(200);
    // The span ends with the stream.
    await response.body?.cancel();
    await expect
      .poll(async () => {
        await tracing.flush();
        return exportedSpans().filter((span) => span.name === 'subscription.Arrivals').length;
      })
      .toBe(1);
    const raw = exports.join('\n');
    expect(raw).not.toContain('messageAdded');
  });

  it('passes the trace context on to the service: traceparent names the upstream attempt', async () => {
    const seen: (string | undefined)[] = [];
    const service = createServer((req, res) => {
      seen.push(req.headers.traceparent as string | undefined);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          success: '1',
          data: [{ number: '15550001', tid: 'T1', type: 'local', webhook: '' }],
        }),
      );
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const { port } = service.address() as AddressInfo;
    const gateway = createTestGateway(`http://127.0.0.1:${port}`, { tracing });
    try {
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      await executeText(gateway.gateway, 'query Passed { ownedNumbers { tid } }', undefined, {
        ...basicAuth(DEMO_CREDENTIALS),
        traceparent: `00-${traceId}-b7ad6b7169203331-01`,
      });
      const { upstream } = await traceOf('query.Passed');
      expect(seen).toEqual([`00-${traceId}-${upstream[0]?.spanId}-01`]);
      // A caller's trace that is not sampled: the call starts no span of its own (the sampler
      // follows the parent), answers as ever, and passes the unsampled trace on.
      const unsampled = '1bf92f3577b34da6a3ce929d0e0e4736';
      const { body } = await executeText(
        gateway.gateway,
        'query NotSampled { ownedNumbers { tid } }',
        undefined,
        { ...basicAuth(DEMO_CREDENTIALS), traceparent: `00-${unsampled}-b7ad6b7169203331-00` },
      );
      expect(body.errors).toBeUndefined();
      expect(seen[1]).toMatch(new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`));
      await tracing.flush();
      expect(exportedSpans().filter((span) => span.traceId === unsampled)).toEqual([]);
    } finally {
      await gateway.close();
      service.close();
    }
  });
});

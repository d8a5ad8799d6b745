/**
 * Opt-in OpenTelemetry: spans reach an OTLP/HTTP receiver on loopback, upstream attempts nest
 * under their GraphQL operation, and no span carries a credential.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS, startSimulator, type RunningSimulator } from '../src/simulator/index.js';
import { startTracing, type Tracing } from '../src/tracing.js';
import { basicAuth, createTestGateway, execute, type TestGateway } from './helpers/harness.js';
import { EveryHistoryQuery } from './helpers/operations.js';

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
  tracing = startTracing(new URL(`http://127.0.0.1:${port}/otel`));
  simulator = await startSimulator();
  test = createTestGateway(simulator.url, { tracing });
});
afterAll(async () => {
  await tracing.shutdown();
  await test.close();
  await simulator.close();
  receiver.close();
});

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
});

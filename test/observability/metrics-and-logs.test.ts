/** Metrics at /metrics, request ids, and structured request logs that carry them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import {
  basicAuth,
  createTestGateway,
  execute,
  executeText,
  type TestGateway,
} from '../fixtures/harness.js';
import { EveryHistoryQuery, OwnedNumbersQuery } from '../fixtures/operations.js';
import { captureLogs } from '../fixtures/captured-logs.js';

let simulator: RunningSimulator;
let test: TestGateway;
const { logger, lines } = captureLogs();
const auth = basicAuth(DEMO_CREDENTIALS);

beforeAll(async () => {
  simulator = await startSimulator();
  test = createTestGateway(simulator.url, {
    metrics: createMetrics(),
    logger,
  });
});
afterAll(async () => {
  await test.close();
  await simulator.close();
});

async function scrape(): Promise<string> {
  const response = await test.gateway.fetch('http://gateway.test/metrics');
  expect(response.status).toBe(200);
  return response.text();
}

describe('metrics', () => {
  it('counts requests and durations per operation, and upstream attempts per upstream operation', async () => {
    await execute(test.gateway, OwnedNumbersQuery, {}, auth);
    await execute(test.gateway, OwnedNumbersQuery, {}, auth);
    await execute(test.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    await execute(test.gateway, OwnedNumbersQuery, {}, { authorization: 'Basic bad' });
    const text = await scrape();
    expect(text).toMatch(
      /graphql_envelop_request\{operationType="query",operationName="OwnedNumbers"\} 3/,
    );
    expect(text).toMatch(
      /graphql_envelop_request\{operationType="query",operationName="EveryHistory"\} 1/,
    );
    expect(text).toMatch(
      /graphql_envelop_request_duration_count\{operationType="query",operationName="OwnedNumbers"\} 3/,
    );
    expect(text).toMatch(
      /sms_upstream_requests_total\{operation="allownednumbers",outcome="ok"\} 3/,
    );
    expect(text).toMatch(/sms_upstream_requests_total\{operation="smshistory",outcome="ok"\} 7/);
    expect(text).toMatch(/sms_upstream_request_duration_seconds_count\{operation="smshistory"\} 7/);
    expect(text).toMatch(/sms_upstream_circuit_open 0/);
    expect(text).toMatch(/graphql_yoga_http_duration_count\{method="POST",statusCode="200"\} 4/);
    expect(text).not.toMatch(/demo-token|QUMtZGVtby/);
  });

  it('counts the calls answered by an identical call already in flight', async () => {
    const before = await scrape();
    const sent = (text: string) =>
      Number(
        /sms_upstream_requests_total\{operation="allownednumbers",outcome="ok"\} (\d+)/.exec(
          text,
        )?.[1] ?? 0,
      );
    await Promise.all([1, 2, 3].map(() => execute(test.gateway, OwnedNumbersQuery, {}, auth)));
    const after = await scrape();
    expect(sent(after) - sent(before)).toBe(1);
    expect(after).toMatch(/sms_upstream_calls_joined_total\{operation="allownednumbers"\} 2/);
  });

  it('counts results with errors by the phase they arose in', async () => {
    await executeText(test.gateway, '{ ownedNumbers { tid ', undefined, auth);
    await executeText(test.gateway, 'query Unknown { noSuchField }', undefined, auth);
    await executeText(test.gateway, 'query Refused { ownedNumbers { tid } }', undefined, {
      authorization: 'Basic bad',
    });
    const text = await scrape();
    // Refused before they validated: whatever name they carry is not a label.
    expect(text).toMatch(
      /graphql_envelop_error_result\{phase="parse",operationName="unvalidated"\} 1/,
    );
    expect(text).toMatch(
      /graphql_envelop_error_result\{phase="validate",operationName="unvalidated"\} 1/,
    );
    expect(text).not.toMatch(/operationName="Unknown"/);
    expect(text).toMatch(
      /graphql_envelop_error_result\{phase="execute",operationName="Refused"\} 1/,
    );
    // Refused before running: an error, not an operation executed.
    expect(text).not.toMatch(/graphql_envelop_request\{[^}]*operationName="Unknown"/);
    expect(text).toMatch(
      /graphql_envelop_request\{operationType="query",operationName="Refused"\} 1/,
    );
  });

  it('bounds the operation-name label, so clients cannot grow the series without limit', async () => {
    for (let i = 0; i < 210; i += 1) await executeText(test.gateway, `query Op${i} { __typename }`);
    const text = await scrape();
    expect(text).toMatch(/operationName="other"\} 1[0-9]/);
    expect(text).not.toMatch(/operationName="Op209"/);
  });

  it('serves the garbage collector durations that docs/limits.md points operators to', async () => {
    expect(await scrape()).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram$/m);
  });
});

describe('request ids and request logs', () => {
  it('returns an x-request-id, keeps a plain one the caller sent, and logs one line per request', async () => {
    lines.length = 0;
    const response = await test.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-123', ...auth },
      body: JSON.stringify({ query: '{ ownedNumbers { tid } }', operationName: null }),
    });
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    const generated = await test.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-request-id': 'bad id\twith "quotes"',
        ...auth,
      },
      body: JSON.stringify({ query: 'query Named { ownedNumbers { tid } }' }),
    });
    const id = generated.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests).toEqual([
      expect.objectContaining({
        requestId: 'trace-123',
        method: 'POST',
        path: '/graphql',
        status: 200,
        level: 30,
      }),
      expect.objectContaining({ requestId: id, operation: 'Named', status: 200 }),
    ]);
    expect(typeof requests[0]?.durationMs).toBe('number');
  });

  it('tags upstream failure lines with the request id', async () => {
    lines.length = 0;
    const failing = createTestGateway('http://127.0.0.1:9', {
      logger,
    });
    try {
      await failing.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-fail-1', ...auth },
        body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
      });
    } finally {
      await failing.close();
    }
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        requestId: 'req-fail-1',
        code: 'UPSTREAM_ERROR',
        cause: 'ECONNREFUSED',
      }),
    );
    expect(JSON.stringify(lines)).not.toMatch(/demo-token|QUMtZGVtby/);
  });
});

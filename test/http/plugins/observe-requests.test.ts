/**
 * The request observer (src/http/plugins/observe-requests.ts) records the signals an operator
 * pages on (docs/observability.md): every GraphQL request counted once in
 * sms_graphql_requests_total with its outcome, answers from the response cache included; every
 * request line naming the operation and the pseudonymous account, cached answers included; and
 * operation names as labels only for operations that validated, so junk names from anyone cannot
 * push real operations into `other`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResponseCache } from '../../../src/cache/response-cache.js';
import {
  createMetrics,
  MAX_OPERATION_NAMES,
  type GatewayMetrics,
} from '../../../src/observability/metrics.js';
import {
  DEMO_CREDENTIALS,
  startSimulator,
  type RunningSimulator,
} from '../../../src/simulator/index.js';
import {
  basicAuth,
  createTestGateway,
  executeText,
  type TestGateway,
} from '../../fixtures/harness.js';
import { captureLogs } from '../../fixtures/captured-logs.js';

let simulator: RunningSimulator;
let test: TestGateway;
let metrics: GatewayMetrics;
const { logger, lines } = captureLogs();
const auth = basicAuth(DEMO_CREDENTIALS);

beforeAll(async () => {
  simulator = await startSimulator();
  metrics = createMetrics();
  test = createTestGateway(simulator.url, {
    metrics,
    logger,
    responseCache: createResponseCache(
      { ttlMs: 60_000, redisUrl: null, hmacKey: null },
      { logger: false },
    ),
  });
});
afterAll(async () => {
  await test.close();
  await simulator.close();
});

/** The value of one sms_graphql_requests_total series, 0 when absent. */
async function requests(labels: Record<string, string>): Promise<number> {
  const metric = await metrics.registry.getSingleMetric('sms_graphql_requests_total')?.get();
  const match = metric?.values.find((v) =>
    Object.entries(labels).every(([k, value]) => String(v.labels[k]) === value),
  );
  return match?.value ?? 0;
}

async function total(): Promise<number> {
  const metric = await metrics.registry.getSingleMetric('sms_graphql_requests_total')?.get();
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

describe('sms_graphql_requests_total', () => {
  it('counts every request once, answered from the cache or not, with its outcome', async () => {
    const before = await total();
    const query = 'query CachedTids { ownedNumbers { tid } }';
    const first = await executeText(test.gateway, query, undefined, auth);
    const second = await executeText(test.gateway, query, undefined, auth);
    expect(second.body).toEqual(first.body);
    await executeText(test.gateway, query, undefined, { authorization: 'Basic bad' });
    await executeText(test.gateway, query);
    await executeText(test.gateway, '{ ownedNumbers { tid ', undefined, auth);

    expect(await total()).toBe(before + 5);
    const ok = { operationName: 'CachedTids', outcome: 'ok', code: 'none' };
    expect(await requests({ ...ok, cached: 'false' })).toBe(1);
    expect(await requests({ ...ok, cached: 'true' })).toBe(1);
    // A client's mistakes are counted apart from the gateway's and the service's errors.
    expect(
      await requests({
        operationName: 'CachedTids',
        outcome: 'client_error',
        code: 'UNAUTHENTICATED',
      }),
    ).toBe(2);
    expect(
      await requests({
        operationName: 'unvalidated',
        outcome: 'client_error',
        code: 'GRAPHQL_PARSE_FAILED',
      }),
    ).toBe(1);
    // The executed-operations counter still counts executions only.
    const scrape = await (await test.gateway.fetch('http://gateway.test/metrics')).text();
    expect(scrape).toMatch(
      /graphql_envelop_request\{operationType="query",operationName="CachedTids"\} 3/,
    );
  });
});

describe('request log lines', () => {
  it('name the operation and the account on every request, cached answers included', async () => {
    lines.length = 0;
    const query = 'query LoggedTids { ownedNumbers { tid number } }';
    await executeText(test.gateway, query, undefined, auth);
    await executeText(test.gateway, query, undefined, auth);
    // The name comes from the document when the request does not send one.
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(2);
    expect(requestLines[1]).toMatchObject({ cached: true });
    for (const line of requestLines) {
      expect(line).toMatchObject({ operation: 'LoggedTids', status: 200 });
      expect(line.account).toMatch(/^[A-Za-z0-9_-]{8,}$/);
    }
    expect(requestLines[0]?.account).toBe(requestLines[1]?.account);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(DEMO_CREDENTIALS.sysId);
    expect(text).not.toContain(DEMO_CREDENTIALS.authToken);
  });

  it('carry outcome and code on every GraphQL answer, successful ones too', async () => {
    lines.length = 0;
    await executeText(test.gateway, 'query OkLine { ownedNumbers { tid } }', undefined, auth);
    await executeText(
      test.gateway,
      'query BadLine { number(tid: "TN-L-0001") { nope } }',
      undefined,
      auth,
    );
    await executeText(test.gateway, 'query NoAuthLine { ownedNumbers { tid } }');
    const byOperation = Object.fromEntries(
      lines.filter((l) => l.msg === 'request').map((l) => [l.operation, l]),
    );
    expect(byOperation.OkLine).toMatchObject({ outcome: 'ok', code: 'none' });
    expect(byOperation.BadLine).toMatchObject({
      outcome: 'client_error',
      code: 'GRAPHQL_VALIDATION_FAILED',
    });
    expect(byOperation.NoAuthLine).toMatchObject({ outcome: 'client_error' });
    expect(byOperation.NoAuthLine?.code).toEqual(expect.any(String));
  });
});

describe('operation names as labels', () => {
  it('keeps real operations labelled by name after 210 anonymous requests with junk names', async () => {
    // Refused at validation (they name anything), and valid ones from callers nobody accepted.
    for (let i = 0; i < 210; i += 1) {
      await executeText(test.gateway, `query Junk${i} { noSuchField${i} }`);
      await executeText(test.gateway, `query Valid${i} { __typename }`);
    }
    for (let i = 0; i < 5; i += 1) {
      await executeText(
        test.gateway,
        `query RealOperation${i} { ownedNumbers { tid } }`,
        undefined,
        auth,
      );
    }
    const scrape = await (await test.gateway.fetch('http://gateway.test/metrics')).text();
    for (let i = 0; i < 5; i += 1) {
      expect(scrape).toMatch(new RegExp(`operationName="RealOperation${i}"`));
    }
    expect(scrape).not.toMatch(/operationName="Junk/);
    expect(scrape).not.toMatch(/operationName="Valid209"/);
    const names = new Set([...scrape.matchAll(/operationName="([^"]*)"/g)].map((m) => m[1]));
    expect(names.size).toBeLessThanOrEqual(MAX_OPERATION_NAMES + 4);
  });
});

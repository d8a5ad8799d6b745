/**
 * What an operator of a fleet reads: every log line and metric names its copy; the metrics
 * fixed for alerts exist (instance info, Redis reachability per use, the memory cache's bytes);
 * subscriptions are logged when they end, with their duration and events delivered; WebSocket
 * connections are logged when they open and close.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createResponseCache } from '../../src/cache/response-cache.js';
import { GRAPHQL_PATH } from '../../src/http/paths.js';
import { captureLogs } from '../fixtures/captured-logs.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { connectRedis } from '../../src/redis/connection.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import { freePort, startRedis, type RunningRedis } from '../fixtures/redis.js';
import { liveStacks } from '../fixtures/live-stack.js';
import { until } from '../../support/wait.js';

const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const INSTANCE = 'gw-signals-1';

let upstream: GrowingUpstream;
let redis: RunningRedis;
const { logger, lines, logged } = captureLogs('info', INSTANCE);

beforeAll(async () => {
  upstream = await startGrowingUpstream({ 'AC-1': ['T-A'] });
  redis = await startRedis();
});
afterAll(async () => {
  await upstream.close();
  await redis.close();
});

const stacks = liveStacks();

describe('metrics of a fleet', () => {
  let test: TestGateway;
  let up: ReturnType<typeof connectRedis>;
  let down: ReturnType<typeof connectRedis>;
  beforeAll(async () => {
    up = connectRedis(new URL(redis.url), 'apq', { logger: false });
    down = connectRedis(new URL(`redis://127.0.0.1:${await freePort()}`), 'live', {
      logger: false,
    });
    const responseCache = createResponseCache(
      { ttlMs: 60_000, redisUrl: null, hmacKey: null },
      { logger: false },
    );
    test = createTestGateway(upstream.url, {
      metrics: createMetrics({ instanceId: INSTANCE, version: '9.8.7' }),
      responseCache,
      redis: { apq: up, live: down },
    });
  });
  afterAll(async () => {
    await test.close();
    await Promise.all([up.close(), down.close()]);
  });

  const scrape = async () => (await test.gateway.fetch('http://gateway.test/metrics')).text();

  it('name the copy on every series, with its version on sms_instance_info', async () => {
    const text = await scrape();
    expect(text).toContain(
      `sms_instance_info{version="9.8.7",commit="unknown",built_at="unknown",instance_id="${INSTANCE}"} 1`,
    );
    const series = text.split('\n').filter((line) => line && !line.startsWith('#'));
    expect(series.length).toBeGreaterThan(20);
    expect(series.filter((line) => !line.includes(`instance_id="${INSTANCE}"`))).toEqual([]);
  });

  it('report Redis reachability per use, and the same on /readiness', async () => {
    expect(await up.ready(5_000)).toBe(true);
    const text = await scrape();
    expect(text).toContain(`sms_redis_up{use="apq",instance_id="${INSTANCE}"} 1`);
    expect(text).toContain(`sms_redis_up{use="live",instance_id="${INSTANCE}"} 0`);
    const readiness = await test.gateway.fetch('http://gateway.test/readiness');
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toMatchObject({
      ready: true,
      status: 'ready',
      redis: { apq: 'up', live: 'down' },
    });
  });

  it('report the bytes the memory cache holds', async () => {
    const bytes = async () =>
      Number(/^sms_response_cache_bytes\{[^}]*\} (\d+)$/m.exec(await scrape())?.[1]);
    expect(await bytes()).toBe(0);
    const response = await test.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ONE },
      body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
    });
    expect(response.status).toBe(200);
    expect(await bytes()).toBeGreaterThan(400);
  });
});

describe('logs of a fleet', () => {
  it('name the copy on every line', () => {
    logger.info('one');
    logger.warn({ code: 'X' }, 'two');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line['service.instance.id']).toBe(INSTANCE);
  });

  it('log an SSE subscription when it ends, with its duration and events, the request line too', async () => {
    const s = stacks.gatewayOver(upstream, { logger, live: { pollMs: 50 } });
    lines.length = 0;
    const historyBefore = upstream.callsOf('smshistory');
    const stream = await s.open('subscription Watch { messageAdded(tids: ["T-A"]) { id } }', ONE);
    // The subscription reads the head itself and the poll loop learns it: what comes after
    // both is new.
    await until(() => upstream.callsOf('smshistory') >= historyBefore + 2);
    upstream.add('T-A', 2);
    await stream.waitFor(2);
    // Streaming: started, not yet a request line.
    expect(logged('subscription started')).toHaveLength(1);
    expect(logged('request')).toHaveLength(0);
    stream.close();
    await until(() => logged('request').length === 1);
    const [ended] = logged('subscription ended');
    expect(ended).toMatchObject({ transport: 'sse', operation: 'Watch', events: 2 });
    expect(ended?.durationMs).toEqual(expect.any(Number));
    const [request] = logged('request');
    expect(request).toMatchObject({ path: '/graphql', status: 200, events: 2 });
    expect(request?.requestId).toBe(ended?.requestId);
    expect(request?.durationMs as number).toBeGreaterThanOrEqual(ended?.durationMs as number);
  });

  it('log WebSocket connections opened and closed, and their subscriptions', async () => {
    const test = createTestGateway(upstream.url, { logger, live: { pollMs: 50 } });
    const server = test.app.server as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      lines.length = 0;
      const historyBefore = upstream.callsOf('smshistory');
      const client = createWsClient({
        url: `ws://127.0.0.1:${port}${GRAPHQL_PATH}`,
        webSocketImpl: WebSocket,
        connectionParams: {
          Authorization: `Basic ${Buffer.from('AC-1:tok-AC-1').toString('base64')}`,
        },
        retryAttempts: 0,
        lazy: false,
      });
      const received: unknown[] = [];
      const unsubscribe = client.subscribe(
        { query: 'subscription Ws { messageAdded(tids: ["T-A"]) { id } }' },
        { next: (value) => received.push(value), error: () => {}, complete: () => {} },
      );
      await until(() => logged('subscription started').length === 1);
      // The subscription reads the head itself and the poll loop learns it: what comes after both
      // is new.
      await until(() => upstream.callsOf('smshistory') >= historyBefore + 2);
      upstream.add('T-A', 1);
      await until(() => received.length === 1);
      unsubscribe();
      await until(() => logged('subscription ended').length === 1);
      await client.dispose();
      await until(() => logged('websocket closed').length === 1);
      expect(logged('websocket connected')).toHaveLength(1);
      expect(logged('subscription ended')[0]).toMatchObject({
        transport: 'websocket',
        operation: 'Ws',
        events: 1,
      });
      expect(logged('websocket closed')[0]).toMatchObject({
        transport: 'websocket',
        code: 1000,
        operations: 1,
      });
      expect(JSON.stringify(lines)).not.toContain('tok-AC-1');
    } finally {
      await test.app.endStreams();
      await new Promise((resolve) => server.close(resolve));
      await test.close();
    }
  });
});

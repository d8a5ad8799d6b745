/**
 * The gateway on a three-node Redis Cluster (Debian's redis-server in cluster mode), configured
 * as an operator would (REDIS_URL plus REDIS_CLUSTER_NODES): two copies share the response
 * cache, APQ hashes and live updates through it, and every use reports itself up.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createApp } from '../../src/start.js';
import { loadConfig } from '../../src/config/config.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import { startRedisCluster, type RunningRedisCluster } from '../fixtures/redis.js';
import { subscribeSse, type SseStream } from '../fixtures/sse.js';
import { until } from '../../support/wait.js';

const HMAC_KEY = 'cluster-test-key-0123456789abcdef0123456789';
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const QUERY = '{ ownedNumbers { tid } }';

let cluster: RunningRedisCluster;
let upstream: GrowingUpstream;
let copies: App[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  upstream = await startGrowingUpstream({ 'AC-1': ['T-A', 'T-B'], 'AC-2': ['T-C'] });
  const config = loadConfig({
    ...cluster.env,
    UPSTREAM_URL: upstream.url,
    CACHE_TTL_MS: '60000',
    CACHE_HMAC_KEY: HMAC_KEY,
    LIVE_POLL_MS: '100',
  });
  copies = [await createApp(config, { logger: false }), await createApp(config, { logger: false })];
}, 30_000);

afterAll(async () => {
  for (const stream of streams) stream.close();
  await Promise.allSettled(copies.map((copy) => copy.close()));
  await upstream?.close();
  await cluster?.close();
});

async function post(app: App, body: unknown, headers: Record<string, string> = ONE) {
  const response = await app.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const [a, b] = [() => copies[0] as App, () => copies[1] as App];

describe('on a three-node Redis Cluster', () => {
  it('connects every use in cluster mode, reported up in metrics and on /readiness', async () => {
    const readiness = await a().gateway.fetch('http://gateway.test/readiness');
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toMatchObject({
      ready: true,
      redis: { cache: 'up', apq: 'up', live: 'up' },
    });
    const metrics = await (await a().gateway.fetch('http://gateway.test/metrics')).text();
    for (const use of ['cache', 'apq', 'live']) {
      expect(metrics).toMatch(new RegExp(`sms_redis_up\\{[^}]*use="${use}"[^}]*\\} 1`));
    }
  });

  it('shares the response cache: an answer stored by one copy is served by the other', async () => {
    const listCalls = () =>
      upstream.calls.filter(
        (c) => c.operation !== 'smshistory' && c.params.get('sys_id') === 'AC-2',
      ).length;
    const before = listCalls();
    const two = { 'x-sys-id': 'AC-2', 'x-auth-token': 'tok-AC-2' };
    const first = await post(a(), { query: QUERY }, two);
    const second = await post(b(), { query: QUERY }, two);
    expect(first.body).toEqual({ data: { ownedNumbers: [{ tid: 'T-C' }] } });
    expect(second.body).toEqual(first.body);
    expect(listCalls() - before).toBe(1);
  });

  it('shares APQ hashes: registered through one copy, run by hash alone on the other', async () => {
    const query = '{ ownedNumbers { tid number } }';
    const hash = createHash('sha256').update(query).digest('hex');
    const persisted = { persistedQuery: { version: 1, sha256Hash: hash } };
    const registered = await post(a(), { query, extensions: persisted });
    expect(registered.status).toBe(200);
    const byHash = await post(b(), { extensions: persisted });
    expect(byHash.status).toBe(200);
    expect(byHash.body).toEqual(registered.body);
  });

  it('shares live updates: one copy polls (Lua lock), both deliver each message once (pub/sub)', async () => {
    const query = 'subscription { messageAdded(tids: ["T-A"]) { id } }';
    const onA = await subscribeSse(a().gateway, query, ONE);
    const onB = await subscribeSse(b().gateway, query, ONE);
    streams.push(onA, onB);
    // Each subscription reads the head itself, and the one polling copy's first poll learns it.
    await until(() => upstream.callsOf('smshistory', 'AC-1') >= 3, 5_000);
    const ids = upstream.add('T-A', 2);
    await onA.waitFor(2, 5_000);
    await onB.waitFor(2, 5_000);
    const idsOf = (stream: SseStream) =>
      stream.events.map((e) => (e.data?.messageAdded as { id: string } | undefined)?.id);
    expect(idsOf(onA)).toEqual(ids);
    expect(idsOf(onB)).toEqual(ids);
  });
});

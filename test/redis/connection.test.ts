/**
 * A Redis that refuses the connection is logged once per use, and the line names the setting
 * that points there: the error alone gives an address, and in Sentinel mode REDIS_URL's host is
 * not used at all. Against real sockets on 127.0.0.1: nothing listening, and a real sentinel
 * (redis-server --sentinel) naming a primary that is down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectRedis,
  pointedThereBy,
  reconnectOnReadOnly,
  type RedisConnection,
} from '../../src/redis/connection.js';
import type { RedisSettings } from '../../src/config/config.js';
import { until } from '../../support/wait.js';
import { captureLogs } from '../fixtures/captured-logs.js';
import { freePort } from '../fixtures/redis.js';

const opened: RedisConnection[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((connection) => connection.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The first warning a connection to `target` logs. */
async function warningFor(target: URL | RedisSettings): Promise<string> {
  const { logger, lines } = captureLogs();
  opened.push(connectRedis(target, 'cache', { logger }));
  await until(() => lines.some((line) => line.level === 40), 5_000);
  return String(lines.find((line) => line.level === 40)?.msg);
}

const sentinelSettings = (url: URL, sentinelPort: number): RedisSettings => ({
  url,
  sentinels: [{ host: '127.0.0.1', port: sentinelPort }],
  sentinelName: 'gateway-primary',
  sentinelPassword: null,
  clusterNodes: [],
});

async function startSentinel(primaryPort: number): Promise<number> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'gateway-sentinel-down-'));
  const config = join(dir, 'sentinel.conf');
  await writeFile(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor gateway-primary 127.0.0.1 ${primaryPort} 1`,
      '',
    ].join('\n'),
  );
  const sentinel: ChildProcess = spawn('redis-server', [config, '--sentinel'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  cleanups.push(async () => {
    if (sentinel.pid !== undefined && sentinel.exitCode === null) {
      const exited = once(sentinel, 'exit');
      process.kill(sentinel.pid, 'SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });
  let output = '';
  sentinel.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(() => /\+monitor master gateway-primary/.test(output), 10_000);
  return port;
}

describe('a Redis that refuses the connection', () => {
  it('single server: the warning names REDIS_URL', async () => {
    const port = await freePort();
    expect(await warningFor(new URL(`redis://127.0.0.1:${port}`))).toBe(
      `Response cache unavailable, answering without it: connect ECONNREFUSED 127.0.0.1:${port} (REDIS_URL points there)`,
    );
  });

  it('Sentinel, no sentinel listening: the warning names REDIS_SENTINELS', async () => {
    const url = new URL(`redis://127.0.0.1:${await freePort()}`);
    expect(await warningFor(sentinelSettings(url, await freePort()))).toMatch(
      /^Response cache unavailable, answering without it: All sentinels are unreachable\. .* \(REDIS_SENTINELS points there\)$/,
    );
  });

  it('Sentinel, the primary it names down: the warning says the sentinels named it, not REDIS_URL', async () => {
    const primaryPort = await freePort();
    const sentinelPort = await startSentinel(primaryPort);
    // REDIS_URL's host is not used with sentinels: a port there must not be blamed.
    const url = new URL(`redis://ignored-host:6379`);
    expect(await warningFor(sentinelSettings(url, sentinelPort))).toBe(
      `Response cache unavailable, answering without it: connect ECONNREFUSED 127.0.0.1:${primaryPort} (the primary the sentinels of REDIS_SENTINELS name for REDIS_SENTINEL_NAME)`,
    );
  });

  it('Cluster: the seed node refused is named by the setting that lists it', () => {
    const cluster: RedisSettings = {
      url: new URL('redis://10.0.0.1:7000'),
      sentinels: [],
      sentinelName: null,
      sentinelPassword: null,
      clusterNodes: [{ host: '10.0.0.2', port: 7001 }],
    };
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    expect(pointedThereBy(cluster, refused('10.0.0.1:7000'))).toBe('REDIS_URL points there');
    expect(pointedThereBy(cluster, refused('10.0.0.2:7001'))).toBe(
      'REDIS_CLUSTER_NODES points there',
    );
    expect(pointedThereBy(cluster, refused('10.0.0.9:7009'))).toBe(
      'a node of the cluster (REDIS_URL, REDIS_CLUSTER_NODES)',
    );
    expect(pointedThereBy(cluster, new Error('Connection is closed.'))).toBeNull();
  });
});

describe('reconnectOnReadOnly', () => {
  it('reconnects (and fails the command at once) when a write meets a replica, and only then', () => {
    expect(
      reconnectOnReadOnly(new Error("READONLY You can't write against a read only replica.")),
    ).toBe(2);
    expect(reconnectOnReadOnly(new Error('ERR wrong number of arguments'))).toBe(false);
    expect(reconnectOnReadOnly(new Error('LOADING Redis is loading the dataset'))).toBe(false);
  });
});

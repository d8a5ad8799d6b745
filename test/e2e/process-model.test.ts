/**
 * The process as operators run it (dist/main.js, and `npm start`): SIGTERM to what README says
 * to run drains, leaving no process behind; stdout is JSON lines naming the instance; a Redis
 * unreachable at start does not hold start-up back (the copy serves, degraded, and says so); a
 * port in use (public or metrics) is one clear line, without a stack trace, and no banner.
 */
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Gateway } from '../../src/http/server.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { DIST_MAIN, ROOT } from '../../support/dist.js';
import { startGatewayProcess } from '../fixtures/gateway-process.js';
import { freePort, startRedis } from '../fixtures/redis.js';
import { subscribeSse } from '../fixtures/sse.js';
import { until, untilAsync } from '../../support/wait.js';

const HMAC_KEY = 'process-model-test-key-0123456789abcdef';
const BASE_ENV = { ...process.env, PORT: '0', HOST: '127.0.0.1', UPSTREAM_URL: '' };

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  it('drains on SIGTERM to npm exactly like SIGTERM to node: no orphan, exit 0', async () => {
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...BASE_ENV, LOG_LEVEL: 'info', SHUTDOWN_READINESS_DELAY_MS: '300' },
    });
    let stdout = '';
    let stderr = '';
    npm.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await until(() => /curl /.test(stderr), 15_000);
    // The gateway is npm's direct child (the script execs node): nothing in between to orphan it.
    const children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(npm.pid)])
      .toString()
      .trim()
      .split('\n');
    expect(children).toHaveLength(1);
    const [pid = '', ...args] = (children[0] ?? '').trim().split(/\s+/);
    expect(args.join(' ')).toBe('node dist/main.js');

    const exited = once(npm, 'exit') as Promise<[number | null, string | null]>;
    npm.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(isAlive(Number(pid))).toBe(false);
    expect(stdout).toContain('"msg":"stopped"');
  }, 30_000);
});

describe('node dist/main.js', () => {
  it('writes only JSON lines on stdout, each naming its instance', async () => {
    const gateway = await startGatewayProcess({ LOG_LEVEL: 'info', INSTANCE_ID: 'gw-test-7' });
    try {
      await fetch(gateway.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      });
      await until(() => gateway.logs().includes('"msg":"request"'));
    } finally {
      await gateway.close();
    }
    const lines = gateway.logs().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      expect(JSON.parse(line)).toMatchObject({ 'service.instance.id': 'gw-test-7' });
    }
  });

  it('with Redis unreachable, serves at once, degraded: readiness detail and sms_redis_up say so', async () => {
    const deadPort = await freePort();
    const startedAt = performance.now();
    const gateway = await startGatewayProcess({
      REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${deadPort}`,
      CACHE_HMAC_KEY: HMAC_KEY,
      CACHE_TTL_MS: '10000',
      LOG_LEVEL: 'info',
    });
    try {
      // Not the 5 s wait there was: the connection is retried in the background.
      expect(performance.now() - startedAt).toBeLessThan(4_000);
      const origin = new URL(gateway.endpoint).origin;
      const readiness = await fetch(`${origin}/readiness`);
      expect(readiness.status).toBe(200);
      expect(await readiness.json()).toMatchObject({
        ready: true,
        redis: { cache: 'down', apq: 'down', live: 'down' },
      });
      const metrics = await (await fetch(`${origin}/metrics`)).text();
      expect(metrics).toMatch(/sms_redis_up\{use="cache",instance_id="[^"]+"\} 0/);
      const answer = await fetch(gateway.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      });
      expect(await answer.json()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await gateway.close();
    }
    const warnings = gateway
      .logs()
      .split('\n')
      .filter((line) => line.includes('"level":40'));
    // One line per use, whatever the reconnect attempts; never the password.
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(3);
    expect(gateway.logs()).not.toContain('hunter2-secret');
  }, 30_000);

  it('logs, once, a live event on its Redis channel that does not open (another secret)', async () => {
    const redis = await startRedis();
    const admin = new Redis(redis.url);
    const gateway = await startGatewayProcess({
      REDIS_URL: redis.url,
      GATEWAY_SECRET: HMAC_KEY,
      LIVE_POLL_MS: '200',
      LOG_LEVEL: 'warn',
    });
    const overHttp = { fetch: (_url: string, init: RequestInit) => fetch(gateway.endpoint, init) };
    const stream = await subscribeSse(
      overHttp as unknown as Gateway,
      `subscription { messageAdded(tids: ["${DEMO_ACCOUNT.numbers[0]!.tid}"]) { id } }`,
      {
        authorization: `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`,
      },
    );
    try {
      const pattern = 'sms-gateway:live:v1:events:*';
      await untilAsync(
        async () => ((await admin.pubsub('CHANNELS', pattern)) as string[]).length > 0,
      );
      const [channel] = (await admin.pubsub('CHANNELS', pattern)) as string[];
      // What a copy with another GATEWAY_SECRET would send: nothing this copy can open.
      for (let i = 0; i < 3; i += 1) await admin.publish(channel!, `not sealed for this copy ${i}`);
      const unopened = () =>
        gateway
          .logs()
          .split('\n')
          .filter((line) => line.includes('ignored a value sealed under another secret'));
      await until(() => unopened().length > 0, 5_000);
      expect(JSON.parse(unopened()[0]!)).toMatchObject({ level: 40 });
      // All three have been read once the gateway has stopped: it quits its Redis connections
      // rather than cutting them, and the subscriber's QUIT reply comes after every message
      // published before it. Its log is whole once its stdout has ended.
      await gateway.close();
      await until(() => gateway.child.stdout?.readableEnded !== false, 5_000);
      expect(unopened()).toHaveLength(1);
      expect(stream.events).toEqual([]);
    } finally {
      stream.close();
      await gateway.close();
      admin.disconnect();
      await redis.close();
    }
  }, 30_000);

  /** Starts the gateway with one of its ports taken; what it printed and its exit code. */
  async function startOnTakenPort(
    portVariable: 'PORT' | 'METRICS_PORT',
  ): Promise<{ port: number; code: number | null; stderr: string; stdout: string }> {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const child = spawn(process.execPath, [DIST_MAIN], {
        cwd: ROOT,
        env: { ...BASE_ENV, [portVariable]: String(port), LOG_LEVEL: 'info' },
      });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { port, code, stderr, stdout };
    } finally {
      taken.close();
    }
  }

  /**
   * Starts the gateway with `portVariable`'s port taken; it exits 1 having printed only the one
   * line that says the port is in use, and never "listening".
   */
  async function expectPortInUseRefusal(portVariable: 'PORT' | 'METRICS_PORT'): Promise<void> {
    const { port, code, stderr, stdout } = await startOnTakenPort(portVariable);
    expect(code).toBe(1);
    // Only the failure: the banner (which says where the gateway listens) is never printed.
    expect(stderr.trim().split('\n')).toEqual([
      `The gateway failed to start: port ${port} on 127.0.0.1 is already in use: stop what listens there or set PORT (METRICS_PORT for metrics)`,
    ]);
    expect(stdout).not.toContain('"msg":"listening"');
  }

  it('says in one line, without a stack trace, that the port is in use; no banner, no "listening"', async () => {
    await expectPortInUseRefusal('PORT');
  }, 20_000);

  it('the metrics port in use: the same one line, and no banner for the public port it opened', async () => {
    await expectPortInUseRefusal('METRICS_PORT');
  }, 20_000);
});

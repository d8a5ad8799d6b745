/**
 * `npm start` as a newcomer runs it: the compiled entry point (dist/main.js) in a child process, the printed curl
 * line executed as printed, GraphiQL, health and readiness, clean shutdown, bad configuration
 * (typos refused with the name meant, production without UPSTREAM_URL), demo mode named in the
 * log and on /readiness, and a demo's cursor and resume token still valid after a restart.
 */
import { spawn, execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../src/http/server.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { DIST_MAIN, ROOT } from '../../support/dist.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { sentinelEnv, startSentinels, type RunningSentinels } from '../fixtures/sentinel.js';
import { subscribeSse } from '../fixtures/sse.js';

const run = promisify(execFile);

function startMain(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [DIST_MAIN], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', UPSTREAM_URL: '', ...env },
  });
}

/** Collects the child's stderr (the banner's stream) until `pattern` appears. */
async function waitForOutput(
  child: ChildProcessWithoutNullStreams,
  pattern: RegExp,
): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${pattern} in output:\n${output}`)),
      15_000,
    );
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (pattern.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

describe('npm start with the built-in simulator', () => {
  let child: ChildProcessWithoutNullStreams;
  let banner: string;
  let endpoint: string;
  let stdout = '';
  beforeAll(async () => {
    child = startMain({ LOG_LEVEL: 'info' });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    banner = await waitForOutput(child, /^ {2}curl .*$/m);
    endpoint = /on (http:\/\/\S+\/graphql)/.exec(banner)?.[1] ?? '';
  });
  afterAll(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints the endpoint, the demo credentials and a curl line', () => {
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
    expect(banner).toContain(
      `sys_id=${DEMO_CREDENTIALS.sysId} auth_token=${DEMO_CREDENTIALS.authToken}`,
    );
  });

  it('the printed curl line returns numbers with their histories', async () => {
    const curl = /^ {2}(curl .*)$/m.exec(banner)?.[1] ?? '';
    const { stdout } = await run('sh', ['-c', curl]);
    const body = JSON.parse(stdout) as {
      data?: {
        ownedNumbers: {
          tid: string;
          history: { totalCount: number; messages: unknown[] } | null;
        }[];
      };
      errors?: unknown;
    };
    expect(body.errors).toBeUndefined();
    expect(body.data?.ownedNumbers.map((n) => n.tid)).toEqual(
      DEMO_ACCOUNT.numbers.map((n) => n.tid),
    );
    expect(body.data?.ownedNumbers.map((n) => n.history?.totalCount)).toEqual(
      DEMO_ACCOUNT.numbers.map((n) => n.messages.length),
    );
    expect(body.data?.ownedNumbers.some((n) => (n.history?.messages.length ?? 0) > 0)).toBe(true);
  });

  it('serves GraphiQL with the default query and the demo credentials pre-filled', async () => {
    const response = await fetch(endpoint, { headers: { accept: 'text/html' } });
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).toContain('NumbersWithLatestMessages');
    const basic = Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString(
      'base64',
    );
    expect(html).toContain(basic);
  });

  it('answers /health and /readiness, which says the simulator serves', async () => {
    const base = endpoint.replace(/\/graphql$/, '');
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const readiness = await fetch(`${base}/readiness`);
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toMatchObject({ ready: true, upstream: 'simulator' });
  });

  it('shuts down cleanly on SIGTERM', async () => {
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('keeps stdout for JSON log lines only (the banner is on stderr)', () => {
    const lines = stdout.split('\n').filter((line) => line !== '');
    const messages = lines.map((line) => (JSON.parse(line) as { msg?: string }).msg);
    expect(messages).toContain('listening');
    expect(messages).toContain('request');
    expect(stdout).not.toContain('curl');
  });

  it('says in the JSON log that the simulator serves, with the demo secret', () => {
    const listening = stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === 'listening');
    expect(listening).toMatchObject({ upstream: 'simulator', secretSource: 'demo' });
  });
});

describe('the compiled build', () => {
  it('npm start runs dist/main.js, which npm ci bundles (prepare) with source maps', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(`${ROOT}/package.json`, 'utf8')) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
    };
    // exec: the shell becomes node, so npm's forwarded SIGTERM reaches the gateway itself.
    expect(pkg.scripts.start).toBe('exec node dist/main.js');
    // prepare builds with scripts/build.ts, and skips the build in a production install.
    expect(pkg.scripts.prepare).toBe('node scripts/prepare.mjs');
    // The build tools are dev dependencies: dist/ bundles what it runs.
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
    expect(Object.keys(pkg.dependencies)).not.toContain('esbuild');
    expect(await readFile(`${DIST_MAIN}.map`, 'utf8')).toContain('main.ts');
  });
});

describe('bad configuration', () => {
  it('stops start-up with a clear message naming each bad variable', async () => {
    const child = startMain({ PORT: 'eighty', UPSTREAM_URL: 'ftp://sms.example.com' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /Invalid configuration:[\s\S]*PORT must be a whole number[\s\S]*UPSTREAM_URL must use http or https/,
    );
  });

  /** Runs dist/main.js with `env` to its exit: the exit code and what it printed on stderr. */
  async function refused(
    env: Record<string, string>,
  ): Promise<{ code: number | null; stderr: string }> {
    const child = startMain(env);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stderr };
  }

  it('refuses misspelt variables, each with the name meant, and former ones, and starts nothing', async () => {
    const { code, stderr } = await refused({
      UPSTREM_URL: 'https://sms.example.com',
      REDIS_ULR: 'redis://redis:6379',
      LIVE_POL_MS: '1000',
      MAX_QUERY_COSTS: '80',
      MAX_TOKENS: '5000',
    });
    expect(code).not.toBe(0);
    expect(stderr).toContain(
      'UPSTREM_URL is not a setting of the gateway: did you mean UPSTREAM_URL?',
    );
    expect(stderr).toContain('REDIS_ULR is not a setting of the gateway: did you mean REDIS_URL?');
    expect(stderr).toContain(
      'LIVE_POL_MS is not a setting of the gateway: did you mean LIVE_POLL_MS?',
    );
    expect(stderr).toContain(
      'MAX_QUERY_COSTS is not a setting of the gateway: did you mean MAX_QUERY_COST?',
    );
    // A former setting: its value is fixed now, and the line says at what.
    expect(stderr).toContain(
      'MAX_TOKENS is no longer a setting: it is fixed at 2000 (docs/configuration.md#fixed-values)',
    );
    expect(stderr).not.toMatch(/listening|curl/);
  });

  it('refuses NODE_ENV=production without UPSTREAM_URL: demo data is never served by accident', async () => {
    const { code, stderr } = await refused({ NODE_ENV: 'production' });
    expect(code).not.toBe(0);
    expect(stderr).toContain('UPSTREAM_URL is required with NODE_ENV=production');
  });
});

describe('npm start with the response cache behind Redis Sentinel', () => {
  let sentinels: RunningSentinels;
  let copy: GatewayProcess;
  beforeAll(async () => {
    sentinels = await startSentinels();
    copy = await startGatewayProcess({
      ...sentinelEnv(sentinels),
      CACHE_TTL_MS: '60000',
      GATEWAY_SECRET: 'start-sentinel-secret-0123456789abcdef',
      LIVE_POLL_MS: '0',
    });
  }, 60_000);
  afterAll(async () => {
    await copy?.close();
    await sentinels?.close();
  });

  it('prints where the cache is: the primary of the sentinels, not REDIS_URL host', async () => {
    await expect
      .poll(() => copy.stderr())
      .toContain(
        `Response cache: on, in Redis at the primary "${sentinels.name}" of sentinels ${sentinels.sentinelList}, answers kept 60000 ms`,
      );
    expect(copy.stderr()).not.toContain('ignored-host');
    // And that is where answers go.
    await fetch(copy.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`,
      },
      body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
    });
    const primary = new Redis(sentinels.primary.url);
    try {
      await expect.poll(() => primary.keys('sms-gateway:response-cache:*')).toHaveLength(1);
    } finally {
      primary.disconnect();
    }
  });
});

describe('demo mode asked for by name in production', () => {
  it('serves the simulator and says so on /readiness', async () => {
    const copy = await startGatewayProcess({ NODE_ENV: 'production', UPSTREAM_URL: 'simulator' });
    try {
      const readiness = await fetch(`${copy.url}/readiness`);
      expect(await readiness.json()).toMatchObject({ ready: true, upstream: 'simulator' });
    } finally {
      await copy.close();
    }
  });
});

describe('a restarted demo', () => {
  const AUTH = {
    authorization: `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`,
  };
  const TID = DEMO_ACCOUNT.numbers[0]!.tid;

  async function post(copy: GatewayProcess, query: string, variables: Record<string, unknown>) {
    const response = await fetch(copy.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...AUTH },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as {
      data?: { number: { messages: { pageInfo: { endCursor: string }; edges: unknown[] } | null } };
      errors?: { extensions?: { code?: string } }[];
    };
  }
  const PAGE = `query($tid: ID!, $after: String) {
    number(tid: $tid) { messages(first: 2, after: $after) { pageInfo { endCursor } edges { cursor } } }
  }`;

  it('keeps its cursors and resume tokens valid (no GATEWAY_SECRET: the fixed demo secret)', async () => {
    // The head message's cursor is also a resume token for its number (src/graph/resume-tokens.ts),
    // and unlike a token naming a message that arrived, it names one the restarted simulator has.
    const first = await startGatewayProcess({ LIVE_POLL_MS: '0' });
    const head = await post(first, PAGE, { tid: TID });
    await first.close();
    const token = (head.data?.number.messages?.edges[0] as { cursor: string } | undefined)?.cursor;
    expect(token).toEqual(expect.any(String));

    const second = await startGatewayProcess({ LIVE_POLL_MS: '100', SIMULATOR_ARRIVALS_MS: '200' });
    try {
      const next = await post(second, PAGE, { tid: TID, after: token });
      expect(next.errors).toBeUndefined();
      expect(next.data?.number.messages?.edges).toHaveLength(2);

      const overHttp = { fetch: (_url: string, init: RequestInit) => fetch(second.endpoint, init) };
      const stream = await subscribeSse(
        overHttp as unknown as Gateway,
        'subscription($tids: [ID!], $t: String) { messageAdded(tids: $tids, resumeToken: $t) { id } }',
        AUTH,
        { tids: [TID], t: token },
      );
      try {
        await stream.waitFor(1, 10_000);
        expect(stream.events[0]?.errors).toBeUndefined();
        expect(stream.events[0]?.data?.messageAdded).toEqual({ id: expect.any(String) });
      } finally {
        stream.close();
      }
    } finally {
      await second.close();
    }
  });
});

/**
 * `npm start` as a newcomer runs it: the compiled entry point (dist/main.js) in a child process, the printed curl
 * line executed as printed, GraphiQL, health and readiness, clean shutdown, bad configuration.
 */
import { spawn, execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { DIST_MAIN, ROOT } from '../../support/dist.js';

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

  it('answers /health and /readiness', async () => {
    const base = endpoint.replace(/\/graphql$/, '');
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect((await fetch(`${base}/readiness`)).status).toBe(200);
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
});

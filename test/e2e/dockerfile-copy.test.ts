/**
 * The image the Dockerfile makes, without a Docker engine: exactly what its runtime stage's COPY
 * lines take from the build stage (whose tree is this checkout once `npm run build` has run:
 * test/fixtures/build-dist.ts) is copied into an empty folder standing for the image's root, and
 * its CMD runs there with the stage's ENV, as the image's user would run it. With no node_modules
 * in reach, it must start, answer its probes, serve the demo query through the simulator, tell its
 * version (package.json) and, when turned on, serve GraphiQL's files.
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_AUTHORIZATION } from '../../src/http/banner.js';
import { ROOT } from '../../support/dist.js';
import { watchGateway, type GatewayProcess } from '../../support/gateway-process.js';
import {
  command,
  copies,
  environment,
  readDockerfile,
  runtimeStage,
  stageNamed,
  workdir,
} from '../fixtures/dockerfile.js';
import { freePort } from '../fixtures/redis.js';

const SECRET = 'dockerfile-copy-test-secret-0123456789abcdef';
const stages = readDockerfile();
const runtime = runtimeStage(stages);

/** The folder standing for the image's `/`, holding only what the runtime stage copied. */
let image: string;
/** Where the CMD runs: the runtime stage's WORKDIR inside `image`. */
let cwd: string;

/** Copies one COPY's source (a path in the build stage) as Docker would, into `image`. */
function copyFromBuild(source: string, destination: string, buildDir: string): void {
  const inBuild = posix.resolve(buildDir, source);
  const fromCheckout = posix.relative(buildDir, inBuild);
  // Outside the build's WORKDIR would be the base image's files, not the build's.
  if (fromCheckout.startsWith('..')) throw new Error(`COPY ${source}: outside ${buildDir}`);
  const from = join(ROOT, fromCheckout);
  if (!existsSync(from)) throw new Error(`COPY ${source}: ${fromCheckout} is not in the build`);
  const target = join(image, posix.resolve(workdir(runtime), destination));
  if (statSync(from).isDirectory()) {
    // A directory's contents go into the destination.
    cpSync(from, target, { recursive: true });
  } else {
    const file = destination.endsWith('/') ? join(target, basename(from)) : target;
    mkdirSync(dirname(file), { recursive: true });
    cpSync(from, file);
  }
}

/** Runs the image's CMD in `cwd` with the image's ENV plus `env`; resolves once it has started. */
async function runImage(env: Record<string, string>): Promise<GatewayProcess> {
  const [program, ...args] = command(runtime);
  // The image's `node` is node 20, as this one: the same binary stands for it.
  expect(program).toBe('node');
  const child = spawn(process.execPath, args, {
    cwd,
    // Nothing from this test's environment: only what the image and the manifests would set.
    env: { PATH: process.env.PATH ?? '', ...environment(runtime), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchGateway(child, { keepLogs: true });
}

beforeAll(() => {
  image = mkdtempSync(join(tmpdir(), 'gateway-image-'));
  for (const copy of copies(runtime)) {
    // The runtime stage takes nothing from the build context: only the build stage's output.
    expect(copy.from, `COPY ${copy.sources.join(' ')}`).not.toBeNull();
    const build = stageNamed(stages, copy.from ?? '');
    for (const source of copy.sources) copyFromBuild(source, copy.destination, workdir(build));
  }
  cwd = join(image, workdir(runtime));
});

afterAll(() => {
  rmSync(image, { recursive: true, force: true });
});

describe('what the Dockerfile copies', () => {
  it('is dist/ and package.json, with no node_modules anywhere Node would look', () => {
    expect(existsSync(join(cwd, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(cwd, 'package.json'))).toBe(true);
    // Node resolves a bare import in every node_modules from cwd up to the root.
    const lookedIn: string[] = [];
    for (let dir = cwd; ; dir = dirname(dir)) {
      lookedIn.push(join(dir, 'node_modules'));
      if (dirname(dir) === dir) break;
    }
    expect(lookedIn.filter((path) => existsSync(path))).toEqual([]);
  });

  describe('started as the image starts it (NODE_ENV=production from its ENV)', () => {
    let gateway: GatewayProcess;
    let port: number;
    let metricsPort: number;
    beforeAll(async () => {
      [port, metricsPort] = [await freePort(), await freePort()];
      gateway = await runImage({
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        UPSTREAM_URL: 'simulator',
        GATEWAY_SECRET: SECRET,
        SHUTDOWN_READINESS_DELAY_MS: '0',
      });
    });
    afterAll(() => gateway?.close());

    it('answers /health 200 and /readiness ready', async () => {
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      const readiness = await fetch(`http://127.0.0.1:${port}/readiness`);
      expect(readiness.status).toBe(200);
      expect(await readiness.json()).toMatchObject({ ready: true });
    });

    it('answers the demo query through the simulator, and logs JSON lines', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: DEMO_AUTHORIZATION },
        body: JSON.stringify({ query: '{ ownedNumbers { number } }' }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data?: { ownedNumbers: unknown[] } };
      expect(body.data?.ownedNumbers.length).toBeGreaterThan(0);
      const lines = gateway.logs().split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    });

    it('tells its version, read from the package.json it was given', async () => {
      const { version } = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')) as {
        version: string;
      };
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const label = /^sms_instance_info\{[^}]*version="([^"]*)"/m.exec(metrics)?.[1];
      expect(label).toContain(version);
    });
  });

  it('serves GraphiQL and its files from dist/ alone when GRAPHIQL=on', async () => {
    const port = await freePort();
    const gateway = await runImage({
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      UPSTREAM_URL: 'simulator',
      GATEWAY_SECRET: SECRET,
      GRAPHIQL: 'on',
      LOG_LEVEL: 'silent',
      SHUTDOWN_READINESS_DELAY_MS: '0',
    });
    try {
      const page = await fetch(`http://127.0.0.1:${port}/graphql`, {
        headers: { accept: 'text/html' },
      });
      expect(page.status).toBe(200);
      const html = await page.text();
      const files = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
      expect(files.length).toBeGreaterThanOrEqual(3);
      for (const file of files) {
        const response = await fetch(new URL(file, `http://127.0.0.1:${port}/graphql`), {
          headers: { 'accept-encoding': 'identity' },
        });
        expect(response.status, file).toBe(200);
        expect((await response.arrayBuffer()).byteLength, file).toBeGreaterThan(0);
      }
    } finally {
      await gateway.close();
    }
  });
});

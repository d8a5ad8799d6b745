/**
 * The production bundle (scripts/build.ts, built by test/fixtures/build-dist.ts): what `node
 * dist/main.js` loads at start is our code and its libraries in a few files, with no import left
 * to node_modules, and the optional subsystems stay out of it until configured. It says what it
 * is: the commit and build time written into it (esbuild's define) on sms_instance_info and in the
 * banner, which in production says GraphiQL is off.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST_MAIN, ROOT } from '../../support/dist.js';
import { startGatewayProcess } from '../fixtures/gateway-process.js';
import { freePort } from '../fixtures/redis.js';
import { startSimulator } from '../../src/simulator/index.js';

const STATIC_IMPORT = /^(?:import|export)\s[^;]*?from\s*"([^"]+)";/gm;
const BARE_IMPORT = /^import\s*"([^"]+)";/gm;

/** Every file `node dist/main.js` loads before its first line runs: static imports only. */
function loadedAtStart(): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    for (const pattern of [STATIC_IMPORT, BARE_IMPORT]) {
      for (const [, specifier] of code.matchAll(pattern)) {
        if (specifier?.startsWith('.')) visit(join(dirname(file), specifier));
      }
    }
  };
  visit(DIST_MAIN);
  return [...seen];
}

function importsOf(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  return [...code.matchAll(STATIC_IMPORT), ...code.matchAll(BARE_IMPORT)].map(([, s]) => s ?? '');
}

function sourcesOf(file: string): string[] {
  return (JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] }).sources;
}

describe('dist/main.js', () => {
  it('imports only Node built-ins and its own chunks: the libraries are bundled', () => {
    for (const file of loadedAtStart()) {
      for (const specifier of importsOf(file)) {
        const allowed =
          isBuiltin(specifier) || specifier.startsWith('./') || specifier.startsWith('../');
        expect(allowed, `${file} imports ${specifier}`).toBe(true);
      }
    }
  });

  it('leaves tracing, Redis, the response cache and GraphiQL for when they are used', () => {
    const sources = loadedAtStart().flatMap(sourcesOf);
    for (const lazy of [
      '@opentelemetry/sdk-trace-base',
      'ioredis',
      'src/cache/response-cache.ts',
      '@graphql-yoga/render-graphiql',
      'src/simulator/index.ts',
      'src/simulator/demo-data.ts',
      'src/observability/tracing.ts',
      // Printing the subgraph SDL: src/graph/service-sdl.ts loads it on the first _service query.
      '@apollo/federation-internals',
      // graphql-jit's customJSONSerializer, never turned on: not bundled at all (scripts/build.ts).
      'fast-json-stringify',
      'node_modules/ajv/',
    ]) {
      expect(sources.filter((s) => s.includes(lazy))).toEqual([]);
    }
  });

  it('holds one copy of graphql-js, its ES module build, with the plain instanceof', () => {
    const loaded = loadedAtStart();
    const sources = loaded.flatMap(sourcesOf);
    expect(sources.filter((s) => /node_modules\/graphql\/.*\.mjs$/.test(s))).not.toEqual([]);
    expect(sources.filter((s) => /node_modules\/graphql\/.*\.js$/.test(s))).toEqual([]);
    // The check for a second copy (graphql's instanceOf outside production) is not bundled.
    const code = loaded.map((file) => readFileSync(file, 'utf8')).join('\n');
    expect(code).not.toContain('from another module or realm');
  });
});

describe('_service { sdl } from the bundle', () => {
  it('is the checked-in schema.graphql, printed on demand', async () => {
    const gateway = await startGatewayProcess();
    try {
      const response = await fetch(gateway.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ _service { sdl } }' }),
      });
      const body = (await response.json()) as { data?: { _service: { sdl: string } } };
      expect(`${body.data?._service.sdl.trimEnd()}\n`).toBe(
        await readFile(join(ROOT, 'schema.graphql'), 'utf8'),
      );
    } finally {
      await gateway.close();
    }
  });
});

describe('what the build says it is', () => {
  it('names its commit and build time on sms_instance_info and in the banner; GraphiQL off in production', async () => {
    const simulator = await startSimulator();
    const metricsPort = await freePort();
    const gateway = await startGatewayProcess({
      NODE_ENV: 'production',
      UPSTREAM_URL: simulator.url,
      GATEWAY_SECRET: 'bundle-identity-secret-0123456789abcdef',
      METRICS_PORT: String(metricsPort),
      METRICS_HOST: '127.0.0.1',
    });
    try {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const info =
        /^sms_instance_info\{version="([^"]+)",commit="([^"]+)",built_at="([^"]+)"/m.exec(text);
      expect(info, text.slice(0, 500)).not.toBeNull();
      const [, version, commit, builtAt] = info!;
      // A commit of this repository (the build may predate the latest one, or carry changes).
      expect(commit).toMatch(/^[0-9a-f]{12}(-dirty)?$/);
      execFileSync('git', ['cat-file', '-e', `${commit!.slice(0, 12)}^{commit}`], { cwd: ROOT });
      // Written as the build began: at most minutes before dist/main.js was.
      const built = Date.parse(builtAt!);
      const written = statSync(DIST_MAIN).mtimeMs;
      expect(built).toBeLessThanOrEqual(written + 1_000);
      expect(written - built).toBeLessThan(10 * 60_000);
      expect(gateway.banner).toContain(`Version ${version}, commit ${commit}, built ${builtAt}`);
      expect(gateway.banner).toContain(
        '(GraphiQL and introspection off; GRAPHIQL=on turns them on)',
      );
      expect(gateway.banner).not.toContain('open it in a browser');
    } finally {
      await gateway.close();
      await simulator.close();
    }
  });
});

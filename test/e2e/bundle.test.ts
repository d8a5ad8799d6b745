/**
 * The production bundle (scripts/build.ts, built by test/fixtures/build-dist.ts): what `node
 * dist/main.js` loads at start is our code and its libraries in a few files, with no import left
 * to node_modules, and the optional subsystems stay out of it until configured.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST_MAIN, ROOT } from '../../support/dist.js';
import { startGatewayProcess } from '../fixtures/gateway-process.js';

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
      '@opentelemetry/sdk-trace-node',
      'ioredis',
      '@envelop/response-cache',
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

  it('holds one copy of graphql-js (the CommonJS build), as Node would load it', () => {
    const sources = loadedAtStart().flatMap(sourcesOf);
    expect(sources.filter((s) => s.includes('node_modules/graphql/'))).not.toEqual([]);
    expect(sources.filter((s) => /node_modules\/graphql\/.*\.mjs$/.test(s))).toEqual([]);
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

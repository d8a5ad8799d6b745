/**
 * The production build: `src/main.ts` and every library it uses bundled by esbuild into
 * dist/main.js, plus one chunk per lazily imported subsystem (tracing, Redis, the response cache,
 * the simulator, GraphiQL's page, ...), still loaded only when configured. One file instead of
 * thousands of module files is what makes start-up fast and small (docs/performance.md).
 *
 * `npm ci` runs it (prepare); `npm run build` by hand; support/dist.ts before tests that start
 * the real process. Type checking stays with `npm run typecheck` (tsc --noEmit).
 *
 * `npm run doctor` runs dist/doctor.js, bundled on its own (no chunks shared with main.js, so
 * the gateway's bundle is the same with or without it).
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild, type BuildOptions, type Plugin } from 'esbuild';
import { gitCommit, UNKNOWN } from '../src/observability/version.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = join(ROOT, 'dist');

/**
 * Bundled CommonJS libraries call `require` for Node's built-ins, which an ES module lacks:
 * give them one. (`__dirname` is not needed: no bundled library reads files beside itself.)
 */
const REQUIRE_SHIM = [
  "import { createRequire as __gatewayCreateRequire } from 'node:module';",
  'const require = __gatewayCreateRequire(import.meta.url);',
].join('\n');

/**
 * @pothos/plugin-federation prints the subgraph SDL while the schema is built, which loads
 * @apollo/federation-internals (about 0.7 MB of code) at every start. Its printer becomes a no-op
 * here; src/graph/service-sdl.ts prints the same SDL with the real one on the first `_service` query.
 */
const deferSubgraphPrinting: Plugin = {
  name: 'defer-subgraph-printing',
  setup(build) {
    build.onResolve({ filter: /^@apollo\/subgraph$/ }, ({ importer }) =>
      importer.includes('/node_modules/@pothos/plugin-federation/')
        ? { path: 'printSubgraphSchema', namespace: 'deferred-subgraph-printer' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'deferred-subgraph-printer' }, () => ({
      contents: "export const printSubgraphSchema = () => '';",
      loader: 'js',
    }));
  },
};

/**
 * graphql-jit imports fast-json-stringify (and with it ajv and fast-uri, about 0.4 MB of code run
 * at every start) for its `customJSONSerializer` option, which the gateway never turns on
 * (src/http/plugins/jit.ts): answers are serialised by yoga. The import becomes a stub that says
 * so if the option is ever turned on.
 */
const skipJitSerializer: Plugin = {
  name: 'skip-jit-serializer',
  setup(build) {
    build.onResolve({ filter: /^fast-json-stringify$/ }, ({ importer }) =>
      importer.includes('/node_modules/graphql-jit/')
        ? { path: 'not-bundled', namespace: 'skipped-jit-serializer' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'skipped-jit-serializer' }, () => ({
      contents:
        "module.exports = () => { throw new Error('graphql-jit customJSONSerializer is not bundled (scripts/build.ts)'); };",
      loader: 'js',
    }));
  },
};

/**
 * graphql's own ESM build for every importer, `require` included: one copy still, as
 * `mainFields` below ensures for the others. Bundled from its CommonJS build, each use of an export
 * by an ES module (the executor's `isNonNullType`, `isListType`, ... per field) went through two
 * getters, graphql's re-export and esbuild's interop: an eighth of the CPU in a profile of a large
 * answer. From the ESM build, esbuild binds ES importers to the functions themselves.
 *
 * Its `instanceOf` is also the production one, whatever NODE_ENV: outside production it compares
 * constructor names on each miss to tell of a second graphql copy, which this bundle cannot hold
 * (a seventh of a large answer's CPU when NODE_ENV is unset, as `npm start` leaves it).
 */
const graphqlAsEsm: Plugin = {
  name: 'graphql-as-esm',
  setup(build) {
    const home = join(ROOT, 'node_modules', 'graphql');
    build.onResolve({ filter: /^graphql(\/.*)?$/ }, ({ path }) => {
      const inside = path.slice('graphql'.length).replace(/^\//, '').replace(/\.js$/, '');
      const file = join(home, inside === '' ? 'index' : inside);
      for (const candidate of [`${file}.mjs`, join(file, 'index.mjs')])
        if (existsSync(candidate)) return { path: candidate };
      return undefined;
    });
    build.onLoad({ filter: /[\\/]graphql[\\/]jsutils[\\/]instanceOf\.mjs$/ }, () => ({
      contents: 'export const instanceOf = (value, constructor) => value instanceof constructor;',
      loader: 'js',
    }));
  },
};

/** What both bundles share: ESM for Node 20, source maps without sources, one graphql. */
const NODE_BUNDLE: BuildOptions = {
  absWorkingDir: ROOT,
  outdir: OUT_DIR,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // The map names the sources (stack traces with --enable-source-maps) without carrying them.
  sourcesContent: false,
  // No keepNames: it wraps every function and class, closures made per request included, in
  // a runtime __name() call (about a tenth of a small query's CPU in a profile). Names that
  // matter are set explicitly (`error.name = ...`), and nothing is minified.
  banner: { js: REQUIRE_SHIM },
  // graphql ships CommonJS (main) and ESM (module) builds: one copy for every importer, or
  // `instanceof GraphQLError` fails across the two. Node picks `main` too.
  mainFields: ['main', 'module'],
  logLevel: 'warning',
  // Warnings from libraries' own guarded requires (optional peers), not from our code.
  logOverride: { 'require-resolve-not-external': 'silent' },
};

/**
 * What sms_instance_info and the banner say this build is (src/observability/version.ts): the
 * commit checked out here, or BUILD_COMMIT where there is no git (a container build given only the
 * files), and the time of the build. Read at build time only: the gateway never reads BUILD_COMMIT.
 */
export function buildIdentity(
  env: Readonly<Record<string, string | undefined>> = process.env,
  now: Date = new Date(),
): { commit: string; builtAt: string } {
  const given = env.BUILD_COMMIT?.trim();
  return { commit: given || (gitCommit(ROOT) ?? UNKNOWN), builtAt: now.toISOString() };
}

/** esbuild's `define`: each value is JavaScript, so a JSON string. */
export function identityDefines(identity: { commit: string; builtAt: string }) {
  return {
    __GATEWAY_COMMIT__: JSON.stringify(identity.commit),
    __GATEWAY_BUILT_AT__: JSON.stringify(identity.builtAt),
  };
}

export async function build(): Promise<void> {
  rmSync(OUT_DIR, { recursive: true, force: true });
  const define = identityDefines(buildIdentity());
  await esbuild({
    ...NODE_BUNDLE,
    define,
    entryPoints: { main: 'src/main.ts' },
    // Lazy `import()`s become their own chunks, loaded only when that code path runs.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [deferSubgraphPrinting, skipJitSerializer, graphqlAsEsm],
  });
  // The doctor is its own bundle: main.js carries none of it.
  await esbuild({
    ...NODE_BUNDLE,
    define,
    entryPoints: { doctor: 'src/doctor/main.ts' },
    plugins: [graphqlAsEsm],
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  build().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

/**
 * Composes the supergraph a router serves: this gateway's subgraph SDL (the checked-in
 * schema.graphql, what `_service { sdl }` returns) with the SDL files of the other subgraphs,
 * by @theguild/federation-composition, into supergraph.graphql (docs/federation.md).
 *
 *   npx tsx scripts/compose-supergraph.ts --url http://sms.internal:4000/graphql \
 *     --subgraph contacts,http://contacts.internal:4001/graphql,contacts.graphql \
 *     --out supergraph.graphql
 *
 * Exits 1 with one line per composition error, 2 on bad arguments; nothing is written then.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { composeServices } from '@theguild/federation-composition';
import { GraphQLError, parse, type DocumentNode } from 'graphql';

/** This gateway's SDL as deployed: the file `npm run schema` writes and `schema:check` checks. */
export const SMS_SDL_FILE = fileURLToPath(new URL('../schema.graphql', import.meta.url));

export interface SubgraphSource {
  /** The subgraph's name in the supergraph (a router's header rule keys on it). */
  readonly name: string;
  /** Where the router reaches it. */
  readonly url: string;
  /** Its SDL file. */
  readonly sdlFile: string;
}

export interface ComposeOptions {
  /** This gateway; its SDL file defaults to schema.graphql. */
  readonly sms: Omit<SubgraphSource, 'sdlFile'> & { readonly sdlFile?: string };
  readonly others: readonly SubgraphSource[];
}

/** Bad arguments or an unreadable SDL file: said in one line, exit 2. */
export class UsageError extends Error {}

/** Composition refused the subgraphs: one line per error, exit 1. */
export class CompositionError extends Error {
  constructor(readonly errors: readonly string[]) {
    super(`composition failed:\n${errors.map((e) => `  ${e}`).join('\n')}`);
  }
}

const USAGE =
  'usage: compose-supergraph --url <this gateway URL> [--name sms] [--sdl schema.graphql] ' +
  '--subgraph <name>,<url>,<sdl file> [--subgraph ...] [--out supergraph.graphql | -]';

/** `--subgraph name,url,file`: the name up to the first comma, the file after the last. */
function parseSubgraph(value: string): SubgraphSource {
  const first = value.indexOf(',');
  const last = value.lastIndexOf(',');
  if (first < 0 || last === first) {
    throw new UsageError(`--subgraph ${value}: expected <name>,<url>,<sdl file>`);
  }
  return {
    name: value.slice(0, first),
    url: value.slice(first + 1, last),
    sdlFile: value.slice(last + 1),
  };
}

function checkSource({ name, url }: { name: string; url: string }): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new UsageError(`subgraph name ${JSON.stringify(name)}: letters, digits and _ only`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`subgraph ${name}: ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`subgraph ${name}: ${url} is not http or https`);
  }
}

export interface ParsedArguments extends ComposeOptions {
  /** Where the supergraph goes; `-` is stdout. */
  readonly out: string;
}

export function parseArguments(argv: readonly string[]): ParsedArguments {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        url: { type: 'string' },
        name: { type: 'string', default: 'sms' },
        sdl: { type: 'string' },
        subgraph: { type: 'string', multiple: true, default: [] },
        out: { type: 'string', default: 'supergraph.graphql' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  if (!values.url) throw new UsageError(`--url is required\n${USAGE}`);
  const sms = {
    name: values.name,
    url: values.url,
    ...(values.sdl ? { sdlFile: values.sdl } : {}),
  };
  const others = values.subgraph.map(parseSubgraph);
  if (others.length === 0) throw new UsageError(`at least one --subgraph is required\n${USAGE}`);
  const names = [sms.name, ...others.map((o) => o.name)];
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new UsageError(`subgraph name ${twice} given twice`);
  for (const source of [sms, ...others]) checkSource(source);
  return { sms, others, out: values.out };
}

async function readSdl(name: string, file: string): Promise<DocumentNode> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`subgraph ${name}: cannot read ${file} (${(error as Error).message})`);
  }
  try {
    return parse(text);
  } catch (error) {
    const message = error instanceof GraphQLError ? error.message : String(error);
    throw new UsageError(`subgraph ${name}: ${file} is not GraphQL SDL (${message})`);
  }
}

/** The supergraph SDL; throws CompositionError when the subgraphs do not compose. */
export async function composeSupergraph({ sms, others }: ComposeOptions): Promise<string> {
  const sources = [{ ...sms, sdlFile: sms.sdlFile ?? SMS_SDL_FILE }, ...others];
  const services = await Promise.all(
    sources.map(async ({ name, url, sdlFile }) => ({
      name,
      url,
      typeDefs: await readSdl(name, sdlFile),
    })),
  );
  const result = composeServices(services);
  if (result.errors?.length || !result.supergraphSdl) {
    throw new CompositionError(
      (result.errors ?? []).map((e) => `${e.extensions.code ?? 'ERROR'}: ${e.message}`),
    );
  }
  return result.supergraphSdl;
}

/** The command: composes, writes, and answers the exit code (0, 1 or 2). */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const { out, ...options } = parseArguments(argv);
    const supergraph = await composeSupergraph(options);
    if (out === '-') {
      process.stdout.write(supergraph);
    } else {
      await writeFile(resolve(out), supergraph);
      console.error(`Wrote ${resolve(out)} (${[options.sms, ...options.others].length} subgraphs)`);
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    if (error instanceof CompositionError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}

/**
 * The code blocks of README.md and docs/ that a frontend copies, extracted so tests can run them
 * as they stand. A block is marked by its info string: ```ts snippet=apollo-setup
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = new URL('../../', import.meta.url);

export interface Snippet {
  /** The file it is in, relative to the repository root. */
  readonly file: string;
  readonly name: string;
  readonly lang: string;
  readonly code: string;
}

export interface CodeBlock {
  readonly file: string;
  readonly lang: string;
  readonly info: string;
  readonly code: string;
}

/** Every fenced block of a Markdown file. */
export function codeBlocks(file: string): CodeBlock[] {
  const text = readFileSync(new URL(file, root), 'utf8');
  const blocks: CodeBlock[] = [];
  for (const match of text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const info = (match[1] ?? '').trim();
    blocks.push({ file, lang: info.split(/\s+/)[0] ?? '', info, code: match[2] ?? '' });
  }
  return blocks;
}

/** The marked blocks of a file, by name. */
export function snippets(file: string): Map<string, Snippet> {
  const found = new Map<string, Snippet>();
  for (const block of codeBlocks(file)) {
    const name = /\bsnippet=([\w-]+)/.exec(block.info)?.[1];
    if (!name) continue;
    if (found.has(name)) throw new Error(`${file}: two snippets named ${name}`);
    found.set(name, { file, name, lang: block.lang, code: block.code });
  }
  return found;
}

/** Every snippet of these files, by name; throws on a name used twice. */
export function allSnippets(files: readonly string[]): Map<string, Snippet> {
  const all = new Map<string, Snippet>();
  for (const file of files) {
    for (const [name, snippet] of snippets(file)) {
      if (all.has(name)) throw new Error(`snippet ${name} is in two files`);
      all.set(name, snippet);
    }
  }
  return all;
}

export interface RunOptions {
  /** The gateway's origin, e.g. http://127.0.0.1:39211: replaces http://localhost:4000. */
  readonly origin: string;
  /** Declarations the snippets expect to find (sysId, authToken, tid, ...). */
  readonly prelude: string;
  /** Names the snippets define that the test reads afterwards. */
  readonly exports: readonly string[];
  /** Where the module is written (its imports resolve from there). @default test-output/snippets */
  readonly dir?: URL;
}

let written = 0;

/**
 * Writes the snippets, in order, as one module (prelude first, the gateway's real origin in place
 * of localhost:4000) and imports it: what the snippets define is what the module exports.
 */
export async function runSnippets<T>(parts: readonly Snippet[], options: RunOptions): Promise<T> {
  const ws = options.origin.replace(/^http/, 'ws');
  const body = parts
    .map((part) =>
      part.code
        .replaceAll('http://localhost:4000', options.origin)
        .replaceAll('ws://localhost:4000', ws),
    )
    .join('\n');
  const source = [
    `// Generated from ${parts.map((p) => `${p.file}#${p.name}`).join(', ')}`,
    options.prelude,
    body,
    `export { ${options.exports.join(', ')} };`,
  ].join('\n');
  const dir = options.dir ?? new URL('test-output/snippets/', root);
  await mkdir(dir, { recursive: true });
  written += 1;
  const file = new URL(`${parts.map((p) => p.name).join('+')}-${written}.ts`, dir);
  await writeFile(file, source);
  return (await import(pathToFileURL(fileURLToPath(file)).href)) as T;
}

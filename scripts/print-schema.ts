/**
 * Writes schema.graphql (the subgraph SDL, for routers) and schema.client.graphql (plain GraphQL,
 * for frontends) from the code; with --check, fails when a checked-in file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { printClientSchema, printGatewaySchema } from '../src/graph/print.js';

const outputs = [
  { file: 'schema.graphql', text: printGatewaySchema() },
  { file: 'schema.client.graphql', text: printClientSchema() },
];

const check = process.argv.includes('--check');
let stale = false;
for (const { file, text } of outputs) {
  const target = fileURLToPath(new URL(`../${file}`, import.meta.url));
  if (check) {
    const current = await readFile(target, 'utf8').catch(() => '');
    if (current !== text) {
      console.error(`${file} is out of date with the code: run \`npm run schema\` and commit it.`);
      stale = true;
    } else {
      console.log(`${file} is up to date.`);
    }
  } else {
    await writeFile(target, text);
    console.log(`Wrote ${target}`);
  }
}
if (stale) process.exit(1);

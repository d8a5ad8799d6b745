/** Writes schema.graphql from the code; with --check, fails when the checked-in file is stale. */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { printGatewaySchema } from '../src/schema/print.js';

const target = fileURLToPath(new URL('../schema.graphql', import.meta.url));
const printed = printGatewaySchema();

if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== printed) {
    console.error(
      'schema.graphql is out of date with the code: run `npm run schema` and commit the result.',
    );
    process.exit(1);
  }
  console.log('schema.graphql is up to date.');
} else {
  await writeFile(target, printed);
  console.log(`Wrote ${target}`);
}

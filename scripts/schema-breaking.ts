/**
 * Fails when the code's client schema breaks the last released one (schema.released.graphql):
 * a removed field or type, a tightened argument, a changed type. Run by `npm run schema:check`.
 * After a release, copy schema.client.graphql over schema.released.graphql.
 */
import { readFile } from 'node:fs/promises';
import { printClientSchema } from '../src/graph/print.js';
import { breakingChanges } from './breaking-changes.js';

const released = await readFile(new URL('../schema.released.graphql', import.meta.url), 'utf8');
const breaking = await breakingChanges(released, printClientSchema());
if (breaking.length > 0) {
  console.error('Breaking changes against schema.released.graphql:');
  for (const change of breaking) console.error(`  - ${change.message}`);
  console.error('Deprecate instead of removing, or make the break deliberate in a new release.');
  process.exit(1);
}
console.log('No breaking change against schema.released.graphql.');

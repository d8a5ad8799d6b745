/** The `npm run doctor` process: runs the doctor on this process's arguments and environment. */
import { runDoctor } from './doctor.js';

process.exitCode = await runDoctor({
  argv: process.argv.slice(2),
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}).catch((error: unknown) => {
  // An unexpected failure: its name only, as a message could carry anything.
  process.stderr.write(`The doctor failed unexpectedly (${(error as Error)?.name ?? 'error'})\n`);
  return 2;
});

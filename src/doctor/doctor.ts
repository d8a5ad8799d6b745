/** `npm run doctor` (docs/doctor.md). Credentials come from the environment only, never written. */
import { parseArgs } from 'node:util';
import { ConfigError, loadDoctorSettings } from '../config/config.js';
import { createCaller } from './caller.js';
import { findingsFrom, type Finding } from './findings.js';
import { CouldNotAsk, runProbes } from './probes.js';
import { createRedactor } from './redact.js';
import { renderReport, writeJsonReport } from './report.js';

const DEFAULT_MAX_CALLS = 40;
const DEFAULT_RATE = 4;
const MAX_RATE = 100;
const MAX_CALLS_CEILING = 1_000;

const USAGE = `Usage: npm run doctor -- [--max-calls N] [--rate N] [--json FILE]

Asks the SMS service at UPSTREAM_URL, with the account in SMS_SYS_ID and SMS_AUTH_TOKEN
(environment only), what its documentation leaves open. Read-only calls.

  --max-calls N  calls in all, 1 to ${MAX_CALLS_CEILING} (default ${DEFAULT_MAX_CALLS})
  --rate N       calls a second at most, up to ${MAX_RATE} (default ${DEFAULT_RATE})
  --json FILE    also write the findings to FILE as JSON

Exit 0: every assumption of the gateway holds; 1: one does not; 2: the service could not be asked.
`;

export interface DoctorIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** The options, or the reason they are refused. */
function parseOptions(argv: readonly string[]) {
  let values: { 'max-calls'?: string; rate?: string; json?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        'max-calls': { type: 'string' },
        rate: { type: 'string' },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    // Node's messages quote what was passed, which could be a credential typed as an argument.
    const code = (error as { code?: string }).code;
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
      return 'the doctor takes no arguments besides its options; credentials come from SMS_SYS_ID and SMS_AUTH_TOKEN only';
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return 'an option is missing its value';
    return 'unknown option: the doctor takes --max-calls, --rate and --json; credentials come from the environment only';
  }
  if (values.help) return '';
  const maxCalls =
    values['max-calls'] === undefined ? DEFAULT_MAX_CALLS : Number(values['max-calls']);
  if (!Number.isSafeInteger(maxCalls) || maxCalls < 1 || maxCalls > MAX_CALLS_CEILING)
    return `--max-calls must be a whole number from 1 to ${MAX_CALLS_CEILING}`;
  const rate = values.rate === undefined ? DEFAULT_RATE : Number(values.rate);
  if (!Number.isFinite(rate) || rate <= 0 || rate > MAX_RATE)
    return `--rate must be a number of calls a second above 0, at most ${MAX_RATE}`;
  if (values.json === '') return '--json needs a file name';
  return { maxCalls, ratePerSecond: rate, jsonPath: values.json ?? null };
}

export async function runDoctor(io: DoctorIo): Promise<0 | 1 | 2> {
  const options = parseOptions(io.argv);
  if (typeof options === 'string') {
    io.err(options === '' ? USAGE : `${options}\n\n${USAGE}`);
    return options === '' ? 0 : 2;
  }
  let settings: ReturnType<typeof loadDoctorSettings>;
  try {
    settings = loadDoctorSettings(io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`Could not ask the service: ${error.message}\n`);
    return 2;
  }
  const { url, sysId, authToken, historyEnd, timeoutMs } = settings;
  const redact = createRedactor([sysId, authToken]);
  const { maxCalls, ratePerSecond, jsonPath } = options;
  const callOptions = { baseUrl: url, maxCalls, ratePerSecond, redact };
  const caller = createCaller({ ...callOptions, timeoutMs: callDeadlineMs(timeoutMs) }, settings);
  let findings: Finding[] = [];
  let couldNotAsk: string | null = null;
  try {
    findings = findingsFrom(await runProbes(caller), { historyEnd, timeoutMs });
  } catch (error) {
    if (!(error instanceof CouldNotAsk)) throw error;
    couldNotAsk = error.message;
  }
  const summary = { url: url.href, callsMade: caller.made, maxCalls, ratePerSecond };
  if (couldNotAsk === null) io.out(redact(renderReport(findings, summary)));
  else io.err(redact(`Could not ask the service: ${couldNotAsk}\n`));
  const exitCode: 0 | 1 | 2 =
    couldNotAsk !== null ? 2 : findings.some((f) => f.holds === false) ? 1 : 0;
  const report = { findings, exitCode, couldNotAsk, calls: caller.made };
  if (jsonPath !== null) await writeJsonReport(jsonPath, report, redact);
  return exitCode;
}

/** At least 15 s, and as long as the gateway waits (UPSTREAM_TIMEOUT_MS): slow is not unreachable. */
export const callDeadlineMs = (upstreamTimeoutMs: number) => Math.max(15_000, upstreamTimeoutMs);

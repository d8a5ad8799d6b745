/**
 * Structured JSON logs (pino). Credentials never reach a log line: nothing logs headers or
 * upstream parameters, and the redact list below is a second line of defence should a future
 * change log an object that carries them.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { GraphQLError } from 'graphql';
import type { YogaLogger } from 'graphql-yoga';
import { UpstreamError } from '../core/errors.js';

export type { Logger };

import { defaultInstanceId, LOG_LEVELS } from '../config/config.js';

export { LOG_LEVELS };

/** Credential-bearing keys at the top of a logged object (and in its headers). */
const TOP_LEVEL_REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'headers["x-auth-token"]',
  'headers["x-sys-id"]',
  'credentials',
  'authToken',
  'auth_token',
  'sysId',
  'sys_id',
];

const REDACTED_PATHS = [
  ...TOP_LEVEL_REDACTED_PATHS,
  '*.authorization',
  '*.authToken',
  '*.auth_token',
  '*.credentials',
];

/** pino's isoTime, formatted once per millisecond: a busy copy writes several lines in each. */
let stampedAt = -1;
let stamp = '';
function isoTimeOncePerMs(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/**
 * Every line names the service and this copy (`service.instance.id`, INSTANCE_ID), so lines
 * from a fleet can be told apart once shipped to one place.
 */
export function createLogger(
  level: LevelWithSilent,
  destination?: pino.DestinationStream,
  instanceId: string = defaultInstanceId(),
): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'sms-graphql-gateway', 'service.instance.id': instanceId },
    timestamp: isoTimeOncePerMs,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return pino(options, destination ?? standardOutput());
}

/**
 * The logger for the one line each request writes (src/http/plugins/observe-requests.ts). That
 * line is built from named fields (request id, method, path, status, duration, operation,
 * account id, outcome), none of them a credential, so it keeps only the top-level redaction: the
 * wildcard paths (`*.authToken`, ...) run a redactor over every key of every line, which was 12 KB
 * of garbage per small query, about a twentieth of all it allocates.
 */
export function requestLineLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: TOP_LEVEL_REDACTED_PATHS, censor: '[redacted]' } });
}

/**
 * Standard output, written asynchronously: lines logged while a write is under way go out
 * together in the next one, instead of one blocking write per request line (a tenth of the
 * gateway's time per small query under load). flushLogs() writes what is left before exit.
 */
let stdout: (pino.DestinationStream & { flushSync(): void }) | undefined;
function standardOutput(): pino.DestinationStream {
  stdout ??= pino.destination({ dest: 1, sync: false });
  return stdout;
}

/** Writes any buffered log lines now; call before process.exit. */
export function flushLogs(): void {
  try {
    stdout?.flushSync();
  } catch {
    // Nothing to flush, or stdout already gone: nothing more can be done.
  }
}

/**
 * yoga's logger interface over pino. yoga logs each error it masks or converts. Upstream failures
 * are expected operational events, written by the request observer as rolled-up warnings with
 * their request's id and account (src/http/plugins/observe-requests.ts), so they are skipped
 * here; anything else is logged as an error with its stack.
 */
export function yogaLogger(logger: Logger): YogaLogger {
  const adapt =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      // yoga writes a few debug lines per request: not even formatted unless debug is on.
      if (level === 'debug' && !logger.isLevelEnabled('debug')) return;
      const error = args.find((a): a is Error => a instanceof Error);
      const upstream = error instanceof GraphQLError ? error.originalError : error;
      if (upstream instanceof UpstreamError) return;
      if (error) {
        logger[level]({ err: error }, typeof args[0] === 'string' ? args[0] : error.message);
      } else {
        logger[level](args.map(String).join(' '));
      }
    };
  return { debug: adapt('debug'), info: adapt('info'), warn: adapt('warn'), error: adapt('error') };
}

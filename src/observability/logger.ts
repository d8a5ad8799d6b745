/**
 * Structured JSON logs (pino). Nothing logs headers or upstream parameters; the redact list is a
 * second line of defence against a change that logs an object carrying credentials.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { GraphQLError } from 'graphql';
import type { YogaLogger } from 'graphql-yoga';
import { defaultInstanceId } from '../config/config.js';
import { UpstreamError } from '../core/errors.js';

export type { Logger };

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
  ...['authorization', 'authToken', 'auth_token', 'credentials'].map((key) => `*.${key}`),
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

/** Standard output, written asynchronously: a blocking write per line cost a tenth of a query. */
let stdout: (pino.DestinationStream & { flushSync(): void }) | undefined;

/** Every line names the service and this copy (`service.instance.id`, INSTANCE_ID). */
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
  return pino(options, destination ?? (stdout ??= pino.destination({ dest: 1, sync: false })));
}

/**
 * The logger for each request's line, whose fields are named, none a credential: only the
 * top-level redaction, as the wildcard paths cost a twentieth of what a small query allocates.
 */
export function requestLineLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: TOP_LEVEL_REDACTED_PATHS, censor: '[redacted]' } });
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
 * yoga's logger interface over pino. Upstream failures are skipped: the request observer writes
 * them as rolled-up warnings (warning-rollup.ts). Any other error is logged with its stack.
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
      if (error)
        logger[level]({ err: error }, typeof args[0] === 'string' ? args[0] : error.message);
      else logger[level](args.map(String).join(' '));
    };
  return { debug: adapt('debug'), info: adapt('info'), warn: adapt('warn'), error: adapt('error') };
}

/**
 * Structured JSON logs (pino). Credentials never reach a log line: nothing logs headers or
 * upstream parameters, and the redact list below is a second line of defence should a future
 * change log an object that carries them.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { GraphQLError } from 'graphql';
import type { YogaLogger } from 'graphql-yoga';
import { UpstreamError } from '../core/errors.js';
import { currentRequestId } from './request-id.js';

export type { Logger };

import { defaultInstanceId, LOG_LEVELS } from '../config/config.js';

export { LOG_LEVELS };

const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'headers["x-auth-token"]',
  'headers["x-sys-id"]',
  'credentials',
  'authToken',
  'auth_token',
  'sysId',
  'sys_id',
  '*.authorization',
  '*.authToken',
  '*.auth_token',
  '*.credentials',
];

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
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    mixin: () => {
      const requestId = currentRequestId();
      return requestId ? { requestId } : {};
    },
  };
  return pino(options, destination ?? standardOutput());
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
 * yoga's logger interface over pino. yoga logs each error it masks or converts: upstream
 * failures are expected operational events and become one warn line with their stable code,
 * the low-level cause (ECONNRESET, UND_ERR_HEADERS_TIMEOUT, ...) and the field path; anything
 * else is logged as an error with its stack.
 */
export function yogaLogger(logger: Logger): YogaLogger {
  const refusals = refusalLog(logger);
  const adapt =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const error = args.find((a): a is Error => a instanceof Error);
      const upstream = error instanceof GraphQLError ? error.originalError : error;
      if (upstream instanceof UpstreamError && upstream.refusedFor !== undefined) {
        refusals(upstream, upstream.refusedFor);
      } else if (upstream instanceof UpstreamError) {
        const cause = (upstream.cause as { code?: unknown } | undefined)?.code;
        const path = error instanceof GraphQLError ? error.path : undefined;
        logger.warn({ code: upstream.code, cause, path }, upstream.message);
      } else if (error) {
        logger[level]({ err: error }, typeof args[0] === 'string' ? args[0] : error.message);
      } else {
        logger[level](args.map(String).join(' '));
      }
    };
  return { debug: adapt('debug'), info: adapt('info'), warn: adapt('warn'), error: adapt('error') };
}

/** Refusals of one account (or of the service) within this window make one line. */
export const REFUSAL_LOG_WINDOW_MS = 10_000;
/** Accounts whose refusal windows are remembered; the oldest are forgotten first. */
const MAX_REFUSAL_WINDOWS = 10_000;

/**
 * Calls refused inside the gateway (a 429 window, an open breaker) cost nothing and can come by
 * the thousand from one busy account: the first of each account's window is logged, with how
 * many of its kind the previous window held; the rest are only counted (and in metrics, as
 * sms_upstream_refused_total). Written here: pino has no sampling of its own.
 */
function refusalLog(logger: Logger): (error: UpstreamError, account: string) => void {
  const windows = new Map<string, { startedAt: number; count: number }>();
  return (error, account) => {
    const key = `${error.code}\u0000${account}`;
    const now = Date.now();
    const open = windows.get(key);
    if (open && now - open.startedAt < REFUSAL_LOG_WINDOW_MS) {
      open.count += 1;
      return;
    }
    const previous = open?.count ?? 0;
    windows.delete(key);
    windows.set(key, { startedAt: now, count: 1 });
    if (windows.size > MAX_REFUSAL_WINDOWS) windows.delete(windows.keys().next().value as string);
    logger.warn(
      {
        code: error.code,
        account,
        ...(previous > 1 ? { refusedInLastWindow: previous } : {}),
        windowMs: REFUSAL_LOG_WINDOW_MS,
      },
      `${error.message} (further refusals like it are counted, logged once per ${REFUSAL_LOG_WINDOW_MS / 1000} s)`,
    );
  };
}

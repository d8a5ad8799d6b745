/**
 * Structured JSON logs (pino). Credentials never reach a log line: nothing logs headers or
 * upstream parameters, and the redact list below is a second line of defence should a future
 * change log an object that carries them.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';
import type { YogaLogger } from 'graphql-yoga';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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

export function createLogger(level: LevelWithSilent, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'sms-graphql-gateway' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** yoga's logger interface over pino: yoga passes a message and sometimes an error. */
export function yogaLogger(logger: Logger): YogaLogger {
  const adapt =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const [first, ...rest] = args;
      const error = [first, ...rest].find((a): a is Error => a instanceof Error);
      const message = typeof first === 'string' ? first : (error?.message ?? 'yoga');
      if (error) logger[level]({ err: error }, message);
      else logger[level](message);
    };
  return { debug: adapt('debug'), info: adapt('info'), warn: adapt('warn'), error: adapt('error') };
}

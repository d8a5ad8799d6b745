/**
 * Warnings that repeat are written once per kind and subject and window, with counts, instead of
 * once each: a wrong password sent twice a second, a busy account inside its 429 window (36,000
 * refusals in 16 s), an outage failing every call of every request. Two steps:
 *
 * - within one request, its failed calls are held (`hold`) and handed on as one warning per
 *   code when the request ends (`release`), with how many calls it covers: a query whose 151
 *   histories all fail is one line, not 151;
 * - across requests, the first warning of each key (a code and an account, or `service`) in a
 *   window is written with the number of calls it covers and how many the key's previous window
 *   held; the rest are only counted (and in metrics: sms_upstream_refused_total,
 *   sms_upstream_requests_total, sms_graphql_requests_total).
 *
 * Written here: pino has no sampling or de-duplication of its own.
 */
import type { Logger } from 'pino';
import { currentWarnings } from './request-id.js';

/** Warnings of one key within this window make one line. */
export const WARNING_WINDOW_MS = 10_000;
/** Keys whose windows are remembered; the oldest are forgotten first. */
const MAX_WINDOWS = 10_000;

export interface Warning {
  /** What repeats (an error code): the same key and account within a window is one line. */
  readonly key: string;
  /** The pseudonymous account id it concerns, or `service`; none outside an account. */
  readonly account?: string;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
  /** The calls (or refusals) this warning stands for. @default 1 */
  readonly count?: number;
}

export interface WarningRollup {
  /** Writes the warning if it opens its key's window, else counts it. */
  warn(warning: Warning): void;
}

export function warningRollup(
  logger: Logger,
  windowMs = WARNING_WINDOW_MS,
  now: () => number = Date.now,
): WarningRollup {
  const windows = new Map<string, { startedAt: number; count: number }>();
  const seconds = windowMs / 1000;
  return {
    warn({ key: kind, account, fields, message, count = 1 }) {
      const key = `${kind}\u0000${account ?? ''}`;
      const at = now();
      const open = windows.get(key);
      if (open && at - open.startedAt < windowMs) {
        open.count += count;
        return;
      }
      const previous = open?.count ?? 0;
      windows.delete(key);
      windows.set(key, { startedAt: at, count });
      if (windows.size > MAX_WINDOWS) windows.delete(windows.keys().next().value as string);
      logger.warn(
        {
          ...fields,
          ...(account !== undefined ? { account } : {}),
          ...(count > 1 ? { calls: count } : {}),
          ...(previous > 1 ? { inLastWindow: previous } : {}),
          windowMs,
        },
        `${message} (more like it are counted, logged once per ${seconds} s)`,
      );
    },
  };
}

/** One request's held warnings, by key: the first one's fields and message, and a count. */
export class HeldWarnings {
  // Made at the first warning: most requests have none.
  private held: Map<string, { warning: Warning; count: number }> | undefined;
  private released = false;
  private account: string | undefined;

  constructor(private readonly rollup: WarningRollup) {}

  /** Held until the request ends; after that (a stream's late errors) passed on at once. */
  hold(warning: Warning): void {
    if (this.released) {
      const owner = warning.account ?? this.account;
      this.rollup.warn({ ...warning, ...(owner !== undefined ? { account: owner } : {}) });
      return;
    }
    const key = `${warning.key}\u0000${warning.account ?? ''}`;
    this.held ??= new Map();
    const entry = this.held.get(key);
    if (entry) entry.count += warning.count ?? 1;
    else this.held.set(key, { warning, count: warning.count ?? 1 });
  }

  /** The request ended: one warning per key, with its count, for `account` unless it names one. */
  release(account: string | undefined): void {
    if (this.released) return;
    this.released = true;
    this.account = account;
    if (!this.held) return;
    for (const { warning, count } of this.held.values()) {
      const owner = warning.account ?? account;
      this.rollup.warn({ ...warning, ...(owner !== undefined ? { account: owner } : {}), count });
    }
    this.held = undefined;
  }
}

/**
 * `logger` for code that logs a line per call (the upstream layer's `retrying: ...` warnings):
 * a warning with a `code` written while a request is served is held with that request's other
 * warnings, so a request whose 151 calls are each retried writes one line, not 302. Anything
 * else, and anything outside a request, is written as before. (Object.create is how pino makes
 * its own child loggers: every other method and setting is the original's.)
 */
export function holdingRequestWarnings(logger: Logger): Logger {
  const holding = Object.create(logger) as Logger;
  const warn = function (this: Logger, ...args: unknown[]): void {
    const [fields, message] = args;
    const held = currentWarnings();
    if (
      held &&
      typeof fields === 'object' &&
      fields !== null &&
      'code' in fields &&
      typeof message === 'string'
    ) {
      held.hold({ key: message, fields: fields as Record<string, unknown>, message });
      return;
    }
    (logger.warn as (...a: unknown[]) => void).apply(this, args);
  };
  holding.warn = warn as Logger['warn'];
  return holding;
}

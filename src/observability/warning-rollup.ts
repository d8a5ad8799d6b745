/**
 * Repeated warnings written once per key (a code and an account) and window, with counts; a
 * request's are held until it ends (docs/observability.md). pino has no de-duplication of its own.
 */
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { UpstreamError } from '../core/errors.js';

/** Warnings of one key within this window make one line. */
export const WARNING_WINDOW_MS = 10_000;
/** Keys whose windows are remembered; the oldest are forgotten first. */
const MAX_WINDOWS = 10_000;

export interface Warning {
  /** What repeats (an error code). */
  readonly key: string;
  /** The pseudonymous account id it concerns, or `service`; none outside an account. */
  readonly account?: string;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
  /** The calls (or refusals) this warning stands for. @default 1 */
  readonly count?: number;
}

export type WarningRollup = ReturnType<typeof warningRollup>;

export function warningRollup(
  logger: Logger,
  windowMs = WARNING_WINDOW_MS,
  now: () => number = Date.now,
) {
  const windows = new Map<string, { startedAt: number; count: number }>();
  const seconds = windowMs / 1000;
  return {
    /** Writes the warning if it opens its key's window, else counts it. */
    warn({ key: kind, account, fields, message, count = 1 }: Warning): void {
      const key = keyOf(kind, account);
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

function keyOf(kind: string, account: string | undefined): string {
  return `${kind}\u0000${account ?? ''}`;
}

/** One request's held warnings, by key: the first one's fields and message, and a count. */
export class HeldWarnings {
  // Made at the first warning: most requests have none.
  private held: Map<string, { warning: Warning; count: number }> | undefined;
  private released = false;
  private account: string | undefined;

  constructor(
    private readonly rollup: WarningRollup,
    private readonly requestId: string,
  ) {}

  /** Held until the request ends; after that (a stream's late errors) passed on at once. */
  hold(warning: Warning): void {
    if (this.released) return this.rollup.warn(this.owned(warning, warning.count ?? 1));
    const key = keyOf(warning.key, warning.account);
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
    for (const { warning, count } of this.held.values())
      this.rollup.warn(this.owned(warning, count));
    this.held = undefined;
  }

  private owned(warning: Warning, count: number): Warning {
    const owner = warning.account ?? this.account;
    return {
      ...warning,
      fields: { requestId: this.requestId, ...warning.fields },
      ...(owner !== undefined ? { account: owner } : {}),
      count,
    };
  }
}

/**
 * The warnings of a result's upstream failures. A call refused inside the gateway (`refusedFor`)
 * names whose calls are paused; the others get their request's account when it ends.
 */
export function upstreamWarnings(result: unknown): Warning[] {
  const errors = (result as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.flatMap((error: unknown): Warning[] => {
    const upstream = error instanceof GraphQLError ? error.originalError : error;
    if (!(upstream instanceof UpstreamError)) return [];
    const path = error instanceof GraphQLError ? error.path : undefined;
    const { code, refusedFor: account, message } = upstream;
    if (account !== undefined) return [{ key: code, account, fields: { code }, message }];
    const cause = (upstream.cause as { code?: unknown } | undefined)?.code;
    return [{ key: code, fields: { code, cause, path }, message }];
  });
}

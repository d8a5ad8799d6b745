/**
 * The clocks of one call to the service: its deadline and each attempt's limit (signals that abort
 * with the error the caller should see), and the backoff's sleep, cut short by the deadline.
 */
import { ErrorCode, UpstreamError } from '../core/errors.js';

export function timeoutError(operation: string, ms: number): UpstreamError {
  return new UpstreamError(
    ErrorCode.UpstreamTimeout,
    `The SMS service did not answer ${operation} within ${ms} ms`,
    { retryable: true },
  );
}

export interface Timed {
  readonly signal: AbortSignal;
  clear(): void;
}

/** A signal that aborts after `ms` (with the reason `reason()` makes), or when `parent` does. */
export function abortAfter(ms: number, reason: () => UpstreamError, parent?: AbortSignal): Timed {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), ms);
  const onParentAbort = (): void => controller.abort(parent?.reason);
  parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

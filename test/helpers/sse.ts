/** Reads a GraphQL-over-SSE answer from the gateway in-process: each `next` event's payload. */
import type { ExecutionResult } from 'graphql';
import type { Gateway } from '../../src/server.js';

export interface SseStream {
  /** Payloads received so far, in order. */
  readonly events: ExecutionResult<Record<string, unknown>>[];
  /** True once the server ended the stream. */
  done(): boolean;
  /** Resolves once `count` events have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

export async function subscribeSse(
  gateway: Gateway,
  query: string,
  headers: Record<string, string>,
  variables?: Record<string, unknown>,
): Promise<SseStream> {
  const abort = new AbortController();
  const response = await gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  if (!response.body) throw new Error(`no stream (HTTP ${response.status})`);
  const events: ExecutionResult<Record<string, unknown>>[] = [];
  let ended = false;
  const waiters = new Set<() => void>();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let split;
        while ((split = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, split);
          buffer = buffer.slice(split + 2);
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (data && !block.includes('event: complete')) {
            events.push(JSON.parse(data) as ExecutionResult<Record<string, unknown>>);
          }
          for (const wake of waiters) wake();
        }
      }
    } catch {
      // aborted by close()
    } finally {
      ended = true;
      for (const wake of waiters) wake();
    }
  })();
  return {
    events,
    done: () => ended,
    async waitFor(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count) {
        if (ended) throw new Error(`stream ended after ${events.length} of ${count} events`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`only ${events.length} of ${count} events arrived`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, left);
          waiters.add(wake);
        });
      }
    },
    // Cancelling the body is what a closing browser tab amounts to: the server's stream ends.
    close: () => {
      void reader.cancel().catch(() => undefined);
      abort.abort();
    },
  };
}

/**
 * One load run with autocannon. Each connection is one virtual user with its own requests (and
 * so its own credentials). autocannon's own latency histogram keeps whole milliseconds, too
 * coarse for a sub-millisecond budget, so every response time is also recorded here, in
 * microseconds, from autocannon's `response` event.
 */
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import autocannon, { type Client, type Request } from 'autocannon';

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  /** Seconds to run; ignored when `amount` is set. */
  readonly duration?: number;
  /** Exact number of requests to complete (then the run ends). */
  readonly amount?: number;
  /** Stop after this many seconds even if `amount` is not reached yet. */
  readonly maxSeconds?: number;
  /** The requests virtual user `vu` (0-based, one per connection) sends, in a loop. */
  readonly requestsFor: (vu: number) => Request[];
}

export interface LoadResult {
  /** Responses received. */
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  /** Response times in microseconds. */
  readonly latency: RecordableHistogram;
  /** Non-2xx responses, connection errors and timeouts: any of them spoils the figures. */
  readonly failures: number;
}

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latency = createHistogram();
  let responses = 0;
  let vu = 0;
  const started = process.hrtime.bigint();
  return new Promise<LoadResult>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        timeout: 30,
        ...(options.amount !== undefined
          ? { amount: options.amount }
          : { duration: options.duration ?? 5 }),
        setupClient: (client: Client) => client.setRequests(options.requestsFor(vu++)),
      },
      (error, result) => {
        clearTimeout(deadline);
        if (error) return reject(error);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        resolve({
          requests: responses,
          seconds,
          rps: responses / seconds,
          latency,
          failures: result.non2xx + result.errors + result.timeouts,
        });
      },
    );
    const deadline =
      options.maxSeconds === undefined
        ? undefined
        : setTimeout(() => instance.stop(), options.maxSeconds * 1000);
    instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
      responses++;
      latency.record(Math.max(1, Math.round(ms * 1000)));
    });
  });
}

/** Basic credentials header value. */
export function basic(sysId: string, authToken: string): string {
  return `Basic ${Buffer.from(`${sysId}:${authToken}`).toString('base64')}`;
}

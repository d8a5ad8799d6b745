/**
 * support/recording-upstream.ts and support/bench-accounts.ts: the simulator as tests and benches
 * start it, recording its calls, counting those in flight, slowing down as they pile on, and
 * answering load-test accounts. (test/ mirrors src/: these sit beside the simulator's own tests.)
 */
import { performance } from 'node:perf_hooks';

import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../../support/wait.js';

import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  type SimulatorCredentials,
} from '../../src/simulator/index.js';
import {
  BENCH_MESSAGES_PER_NUMBER,
  benchAccountNumbers,
  benchCredentials,
} from '../../support/bench-accounts.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';

type Json = Record<string, unknown>;

let sim: RecordingUpstream;
beforeAll(async () => {
  sim = await startRecordingUpstream();
});
afterAll(() => sim.close());
beforeEach(() => sim.resetCalls());

function creds(c: SimulatorCredentials = DEMO_CREDENTIALS): Record<string, string> {
  return { sys_id: c.sysId, auth_token: c.authToken };
}

async function call(
  path: string,
  params: Record<string, string>,
  options: { base?: string; method?: 'GET' | 'POST'; contentType?: string; body?: string } = {},
): Promise<{ status: number; json: Json }> {
  const method = options.method ?? 'POST';
  const query = method === 'GET' ? `?${new URLSearchParams(params).toString()}` : '';
  const res = await request(`${options.base ?? sim.url}${path}${query}`, {
    method,
    ...(method === 'POST'
      ? {
          headers: {
            'content-type': options.contentType ?? 'application/x-www-form-urlencoded',
          },
          body: options.body ?? new URLSearchParams(params).toString(),
        }
      : {}),
  });
  return { status: res.statusCode, json: (await res.body.json()) as Json };
}

const BIG = DEMO_ACCOUNT.numbers[0]!; // TN-L-0001, 450 messages

function history(c: SimulatorCredentials, tid: string, number: string, base: string) {
  return call(
    '/api/smshistory',
    { ...creds(c), tid, number, history_start: '0', history_end: '50' },
    { base },
  );
}

describe('calls', () => {
  it('records calls in order, without secrets', async () => {
    await call('/api/ownednumbers', { ...creds(), number_type: 'local' });
    await call('/api/smshistory', {
      ...creds(),
      tid: BIG.tid,
      number: BIG.number,
      history_start: '0',
      history_end: '3',
    });
    await call('/api/allownednumbers', { sys_id: DEMO_CREDENTIALS.sysId, auth_token: 'nope' });
    expect(sim.calls).toEqual([
      {
        operation: 'ownednumbers',
        accountSysId: DEMO_CREDENTIALS.sysId,
        params: { number_type: 'local' },
        status: 200,
      },
      {
        operation: 'smshistory',
        accountSysId: DEMO_CREDENTIALS.sysId,
        params: { tid: BIG.tid, number: BIG.number, history_start: '0', history_end: '3' },
        status: 200,
      },
      { operation: 'allownednumbers', accountSysId: null, params: {}, status: 401 },
    ]);
    const serialized = JSON.stringify(sim.calls);
    expect(serialized).not.toContain(DEMO_CREDENTIALS.authToken);
    expect(serialized).not.toContain('nope');
    sim.resetCalls();
    expect(sim.calls).toHaveLength(0);
  });

  it('records refusals before the credentials (405, 415, 413) but not unknown paths', async () => {
    await call('/api/allownednumbers', { ...creds(), x: '1' }, { method: 'GET' });
    await call('/api/ownednumbers', {}, { contentType: 'application/json', body: '{"a":1}' });
    await call('/api/smshistory', {}, { body: 'a'.repeat(70_000) });
    await call('/api/nope', creds());
    expect(sim.calls).toEqual([
      { operation: 'allownednumbers', accountSysId: null, params: { x: '1' }, status: 405 },
      { operation: 'ownednumbers', accountSysId: null, params: {}, status: 415 },
      { operation: 'smshistory', accountSysId: null, params: {}, status: 413 },
    ]);
  });

  it('keeps a "__proto__" parameter as an ordinary own key', async () => {
    await call('/api/allownednumbers', {}, { body: `__proto__=x&${new URLSearchParams(creds())}` });
    const [recorded] = sim.calls;
    expect(Object.keys(recorded?.params ?? {})).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(recorded?.params)).toBe(Object.prototype);
  });
});

describe('load', () => {
  it('counts calls in flight and the peak, slowing each by latencyPerInFlightMs', async () => {
    const slow = await startRecordingUpstream({ latencyMs: 50, latencyPerInFlightMs: 100 });
    try {
      const started = performance.now();
      const replies = [0, 1, 2].map(() =>
        call('/api/allownednumbers', creds(), { base: slow.url }),
      );
      // Waits for the three to arrive, not for a fixed time: a busy machine may take longer.
      await until(() => slow.load().inFlight === 3, 2_000);
      expect(slow.load()).toEqual({ inFlight: 3, peakInFlight: 3 });
      await Promise.all(replies);
      // The third waited 50 ms plus 100 ms for each of the two ahead of it.
      expect(performance.now() - started).toBeGreaterThanOrEqual(250);
      expect(slow.load()).toEqual({ inFlight: 0, peakInFlight: 3 });
      slow.resetLoad();
      expect(slow.load()).toEqual({ inFlight: 0, peakInFlight: 0 });
      expect(slow.calls).toHaveLength(3);
    } finally {
      await slow.close();
    }
  });

  it('refuses a negative latencyPerInFlightMs', async () => {
    await expect(startRecordingUpstream({ latencyPerInFlightMs: -1 })).rejects.toThrow(RangeError);
  });
});

describe('load-test accounts (benchAccounts)', () => {
  it('exist only when asked for', async () => {
    const reply = await call('/api/allownednumbers', creds(benchCredentials(0)));
    expect(reply.status).toBe(401);
  });

  it('give each index its own credentials, all owning the same numbers', async () => {
    const bench = await startRecordingUpstream({ benchAccounts: { count: 3, numbers: 200 } });
    try {
      const numbers = benchAccountNumbers(200);
      expect(numbers).toHaveLength(200);
      expect(numbers.slice(0, DEMO_ACCOUNT.numbers.length).map((n) => n.tid)).toEqual(
        DEMO_ACCOUNT.numbers.map((n) => n.tid),
      );
      expect(new Set(numbers.map((n) => n.tid)).size).toBe(200);
      const generated = numbers[199];
      expect(generated?.tid).toBe('TN-B-0200');
      expect(generated?.messages).toHaveLength(BENCH_MESSAGES_PER_NUMBER);

      for (const index of [0, 2]) {
        const c = benchCredentials(index);
        const all = await call('/api/allownednumbers', creds(c), { base: bench.url });
        expect((all.json.data as unknown[]).length).toBe(200);
        const page = await history(c, 'TN-B-0200', generated?.number ?? '', bench.url);
        expect(page.json.success).toBe('1');
        expect(page.json.messages as unknown[]).toHaveLength(50);
      }
      expect(bench.calls.map((c) => c.accountSysId)).toEqual([
        'AC-bench-00000',
        'AC-bench-00000',
        'AC-bench-00002',
        'AC-bench-00002',
      ]);
      // Out of range, a wrong token and the demo account still behave as without the option.
      const outside = await call('/api/allownednumbers', creds(benchCredentials(3)), {
        base: bench.url,
      });
      expect(outside.status).toBe(401);
      const wrong = await call(
        '/api/allownednumbers',
        { sys_id: benchCredentials(1).sysId, auth_token: benchCredentials(0).authToken },
        { base: bench.url },
      );
      expect(wrong.status).toBe(401);
      const demo = await call('/api/allownednumbers', creds(), { base: bench.url });
      expect((demo.json.data as unknown[]).length).toBe(DEMO_ACCOUNT.numbers.length);
    } finally {
      await bench.close();
    }
  });

  it("default to the demo account's seven numbers", async () => {
    const bench = await startRecordingUpstream({ benchAccounts: { count: 1 } });
    try {
      const page = await history(benchCredentials(0), BIG.tid, BIG.number, bench.url);
      expect(page.json.total_message_count).toBe(450);
      expect(page.json.messages as unknown[]).toHaveLength(50);
      const all = await call('/api/allownednumbers', creds(benchCredentials(0)), {
        base: bench.url,
      });
      expect((all.json.data as { tid: string }[]).map((n) => n.tid)).toEqual(
        DEMO_ACCOUNT.numbers.map((n) => n.tid),
      );
    } finally {
      await bench.close();
    }
  });

  it('refuses a bad count', async () => {
    await expect(startRecordingUpstream({ benchAccounts: { count: 0 } })).rejects.toThrow(
      RangeError,
    );
    await expect(
      startRecordingUpstream({ benchAccounts: { count: 1, numbers: 3 } }),
    ).rejects.toThrow(RangeError);
  });
});

/**
 * The doctor's caller against real loopback services (the simulator, and a scripted service for
 * 429s, hangs and echoes): what it keeps of each answer, its call budget and rate, its one retry
 * after a 429, and why no answer came, in words that carry no URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetSpent, createCaller, type CallerOptions } from '../../src/doctor/caller.js';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  startSimulator,
  type RunningSimulator,
} from '../../src/simulator/index.js';
import {
  startScriptedUpstream,
  type Script,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';
import { freePort } from '../fixtures/redis.js';

const credentials = DEMO_CREDENTIALS;
const options = (url: string, more: Partial<CallerOptions> = {}): CallerOptions => ({
  baseUrl: new URL(url),
  maxCalls: 40,
  ratePerSecond: 1_000,
  ...more,
});

let simulator: RunningSimulator;
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(() => simulator?.close());

const scripted: ScriptedUpstream[] = [];
async function service(script: Script): Promise<ScriptedUpstream> {
  const started = await startScriptedUpstream(script);
  scripted.push(started);
  return started;
}
afterAll(() => Promise.all(scripted.map((s) => s.close())));

describe('createCaller', () => {
  it("keeps the status, type, size and parsed JSON of an answer, the account's credentials sent", async () => {
    const caller = createCaller(options(simulator.url), credentials);
    const answer = await caller.call('allownednumbers', 'all owned numbers', {});
    expect(answer).toMatchObject({
      operation: 'allownednumbers',
      label: 'all owned numbers',
      status: 200,
      failure: null,
      json: { success: '1' },
    });
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.bytes).toBe(Buffer.byteLength(JSON.stringify(answer.json)));
    const tids = (answer.json as { data: { tid: string }[] }).data.map((n) => n.tid);
    expect(tids).toEqual(DEMO_ACCOUNT.numbers.map((n) => n.tid));
    expect(caller.made).toBe(1);
    expect(caller.answers).toEqual([answer]);
  });

  it("sends a probe's own credentials in place of the account's", async () => {
    const caller = createCaller(options(simulator.url), credentials);
    const answer = await caller.call('allownednumbers', 'invented credentials', {
      sys_id: 'invented',
      auth_token: 'invented',
    });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ success: '0', error: 'invalid credentials' });
  });

  it('refuses a call past its budget with BudgetSpent, before sending it', async () => {
    const upstream = await service(() => ({ json: { success: '1', data: [] } }));
    const caller = createCaller(options(upstream.url, { maxCalls: 2 }), credentials);
    await caller.call('allownednumbers', 'one', {});
    await caller.call('allownednumbers', 'two', {});
    await expect(caller.call('allownednumbers', 'three', {})).rejects.toBeInstanceOf(BudgetSpent);
    expect(caller.made).toBe(2);
    expect(upstream.calls).toHaveLength(2);
  });

  it('starts calls at least 1/rate apart, even when asked at once', async () => {
    const upstream = await service(() => ({ json: { success: '1', data: [] } }));
    const caller = createCaller(options(upstream.url, { ratePerSecond: 20 }), credentials);
    const started = performance.now();
    await Promise.all([1, 2, 3].map((n) => caller.call('allownednumbers', `call ${n}`, {})));
    // Three calls at 20 a second: the third starts 100 ms after the first, at the earliest.
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(caller.answers.map((a) => a.label)).toEqual(['call 1', 'call 2', 'call 3']);
  });

  it('waits out a 429 once and tries again, keeping both answers', async () => {
    let calls = 0;
    const upstream = await service(() =>
      (calls += 1) === 1
        ? { status: 429, json: { success: '0' }, headers: { 'retry-after': '0' } }
        : { json: { success: '1', data: [] } },
    );
    const caller = createCaller(options(upstream.url), credentials);
    const answer = await caller.call('allownednumbers', 'owned', {});
    expect(answer.status).toBe(200);
    expect(answer.label).toBe('owned (retried after 429)');
    expect(caller.answers.map((a) => a.status)).toEqual([429, 200]);
    expect(caller.answers[0]?.limitHeaders).toEqual({ 'retry-after': '0' });
  });

  it('does not retry a 429 whose Retry-After is past its longest wait (10 s)', async () => {
    const upstream = await service(() => ({
      status: 429,
      json: { success: '0' },
      headers: { 'retry-after': '60' },
    }));
    const caller = createCaller(options(upstream.url), credentials);
    const answer = await caller.call('allownednumbers', 'owned', {});
    expect(answer.status).toBe(429);
    expect(upstream.calls).toHaveLength(1);
  });

  it('keeps only the headers that speak of limits', async () => {
    const upstream = await service(() => ({
      json: { success: '1', data: [] },
      headers: { 'x-ratelimit-remaining': '9', 'ratelimit-limit': '10', 'x-served-by': 'edge-1' },
    }));
    const caller = createCaller(options(upstream.url), credentials);
    const answer = await caller.call('allownednumbers', 'owned', {});
    expect(answer.limitHeaders).toEqual({ 'x-ratelimit-remaining': '9', 'ratelimit-limit': '10' });
  });

  it('redacts a body before keeping it', async () => {
    const upstream = await service((call) => ({
      json: { success: '0', error: `bad token ${call.params.get('auth_token')}` },
    }));
    const caller = createCaller(
      options(upstream.url, {
        redact: (text) => text.replaceAll(credentials.authToken, '[token]'),
      }),
      credentials,
    );
    const answer = await caller.call('allownednumbers', 'owned', {});
    expect(answer.json).toEqual({ success: '0', error: 'bad token [token]' });
  });

  it('says why no answer came: nothing listening, or no answer in time', async () => {
    const closed = createCaller(options(`http://127.0.0.1:${await freePort()}`), credentials);
    const refused = await closed.call('allownednumbers', 'owned', {});
    expect(refused).toMatchObject({ status: null, failure: 'no answer (ECONNREFUSED)', bytes: 0 });

    const hanging = await service(() => ({ hang: true }));
    const slow = createCaller(options(hanging.url, { timeoutMs: 200 }), credentials);
    const late = await slow.call('allownednumbers', 'owned', {});
    expect(late).toMatchObject({ status: null, failure: 'no answer within 200 ms' });
    expect(late.json).toBeUndefined();
  });
});

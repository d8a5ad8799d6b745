/** What the doctor asks, against the simulator in each reading of `history_end`; and cannotAsk. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCaller, type Answer } from '../../src/doctor/caller.js';
import { cannotAsk, CouldNotAsk, runProbes } from '../../src/doctor/probes.js';
import {
  DEMO_CREDENTIALS,
  startSimulator,
  type RunningSimulator,
} from '../../src/simulator/index.js';

const running: RunningSimulator[] = [];
afterAll(() => Promise.all(running.map((s) => s.close())));

let exclusive: RunningSimulator;
let inclusive: RunningSimulator;
beforeAll(async () => {
  exclusive = await startSimulator({ historyEnd: 'exclusive' });
  inclusive = await startSimulator({ historyEnd: 'inclusive' });
  running.push(exclusive, inclusive);
});

const caller = (url: string, maxCalls = 40, sysId = DEMO_CREDENTIALS.sysId) =>
  createCaller(
    { baseUrl: new URL(url), maxCalls, ratePerSecond: 1_000 },
    { sysId, authToken: DEMO_CREDENTIALS.authToken },
  );

describe('runProbes', () => {
  it('reads one number at 0..5, 0..1 and 1..2: one message each where history_end is exclusive', async () => {
    const seen = await runProbes(caller(exclusive.url));
    const end = seen.end;
    expect(end).not.toBeNull();
    expect(end!.reference.length).toBeGreaterThanOrEqual(3);
    expect(end!.zeroToOne).toEqual(end!.reference.slice(0, 1));
    expect(end!.oneToTwo).toEqual(end!.reference.slice(1, 2));
  });

  it('and two messages each where it is inclusive', async () => {
    const seen = await runProbes(caller(inclusive.url));
    const end = seen.end;
    expect(end).not.toBeNull();
    expect(end!.zeroToOne).toEqual(end!.reference.slice(0, 2));
    expect(end!.oneToTwo).toEqual(end!.reference.slice(1, 3));
  });

  it("gets the service's errors: invented credentials, no history_end, a reversed range", async () => {
    const seen = await runProbes(caller(exclusive.url));
    expect(seen.wrongCredentials?.status).toBe(401);
    expect(seen.missingParameter?.status).toBe(400);
    expect(seen.missingParameter?.json).toMatchObject({
      error: 'missing parameter: history_end',
    });
    expect(seen.reversed?.status).toBe(400);
    expect(seen.pastTotal?.status).toBe(200);
    expect(seen.typed.map((t) => [t.type, t.answer.status])).toEqual([
      ['local', 200],
      ['tollfree', 200],
    ]);
  });

  it('spends the whole budget, the rest on timing samples', async () => {
    const seen = await runProbes(caller(exclusive.url, 30));
    expect(seen.callsMade).toBe(30);
    expect(seen.answers).toHaveLength(30);
    expect(seen.answers.filter((a) => a.label.endsWith('(timing)')).length).toBeGreaterThan(10);
  });

  it('answers the end question first when the budget is small', async () => {
    const seen = await runProbes(caller(exclusive.url, 4));
    expect(seen.end?.zeroToOne).toHaveLength(1);
    expect(seen.end?.oneToTwo).toHaveLength(1);
    expect(seen.callsMade).toBe(4);
    expect(seen.wrongCredentials).toBeNull();
    expect(seen.typed).toEqual([]);
  });

  it('fails with CouldNotAsk when the first call is refused', async () => {
    const refused = runProbes(caller(exclusive.url, 40, 'not-an-account'));
    await expect(refused).rejects.toBeInstanceOf(CouldNotAsk);
    await expect(refused).rejects.toThrow(/refused SMS_SYS_ID \/ SMS_AUTH_TOKEN \(HTTP 401\)/);
  });
});

/** An answer as the caller keeps it: a JSON 200 unless told otherwise. */
const answer = (more: Partial<Answer>): Answer => ({
  operation: 'allownednumbers',
  label: 'all owned numbers',
  status: 200,
  failure: null,
  contentType: 'application/json',
  limitHeaders: {},
  ms: 5,
  json: { success: '1', data: [] },
  bytes: 10,
  ...more,
});

describe('cannotAsk', () => {
  it('is null for a successful answer', () => {
    expect(cannotAsk(answer({}))).toBeNull();
  });

  it('says why an answer tells nothing', () => {
    expect(cannotAsk(answer({ status: null, failure: 'no answer (ECONNREFUSED)' }))).toBe(
      'could not reach UPSTREAM_URL: no answer (ECONNREFUSED)',
    );
    expect(cannotAsk(answer({ status: 403 }))).toMatch(/refused SMS_SYS_ID.*HTTP 403/);
    expect(cannotAsk(answer({ status: 429, limitHeaders: { 'retry-after': '30' } }))).toMatch(
      /rate limiting this account \(HTTP 429, Retry-After 30\)/,
    );
    expect(cannotAsk(answer({ json: undefined, contentType: 'text/html' }))).toMatch(
      /not JSON \(HTTP 200, text\/html\): is UPSTREAM_URL the service's base URL\?/,
    );
    expect(cannotAsk(answer({ json: [1, 2] }))).toMatch(/not a JSON object/);
    expect(cannotAsk(answer({ json: { success: '0', error: 'something else' } }))).toMatch(
      /answered allownednumbers with a failure \(HTTP 200, success "0"\)/,
    );
    expect(cannotAsk(answer({ status: 500, json: { success: '1', data: [] } }))).toBe(
      'the service answered allownednumbers with HTTP 500',
    );
  });
});

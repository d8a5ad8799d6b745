/**
 * `npm run doctor` in-process (runDoctor, at a fast --rate) against real loopback services: the
 * built-in simulator in each reading of history_end, finding by finding; a quirky service whose
 * answers break several assumptions (exit 1, each named); services that cannot be asked (HTML,
 * 429s, refused credentials, nothing listening: exit 2 with the reason); the call budget and
 * rate; and no credential, in any encoding, in stdout, stderr or the JSON.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callDeadlineMs, runDoctor } from '../../src/doctor/doctor.js';
import type { Finding } from '../../src/doctor/findings.js';
import type { JsonReport } from '../../src/doctor/report.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { startRecordingUpstream } from '../../support/recording-upstream.js';
import {
  startScriptedUpstream,
  type ScriptedCall,
  type ScriptedReply,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';
import { freePort } from '../fixtures/redis.js';

const FAST = ['--rate', '100'];
const dir = mkdtempSync(join(tmpdir(), 'doctor-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EVERY_ID = [
  'history.end',
  'history.pastTotal',
  'history.startBeyondTotal',
  'history.reversed',
  'errors.wrongCredentials',
  'errors.missingParameter',
  'contentTypes',
  'rateLimit',
  'fields.extra',
  'fields.missing',
  'values.direction',
  'values.optin',
  'values.type',
  'values.status',
  'values.mms',
  'timestamps',
  'phoneNumbers',
  'latency',
];

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly json: JsonReport | null;
  readonly jsonText: string;
  finding(id: string): Finding;
}

let runs = 0;
async function doctor(
  url: string,
  credentials: { sysId: string; authToken: string },
  args: readonly string[] = FAST,
  env: Record<string, string> = {},
): Promise<Run> {
  const jsonPath = join(dir, `report-${(runs += 1)}.json`);
  let stdout = '';
  let stderr = '';
  const code = await runDoctor({
    argv: [...args, '--json', jsonPath],
    env: {
      UPSTREAM_URL: url,
      SMS_SYS_ID: credentials.sysId,
      SMS_AUTH_TOKEN: credentials.authToken,
      ...env,
    },
    out: (text) => (stdout += text),
    err: (text) => (stderr += text),
  });
  let jsonText = '';
  try {
    jsonText = readFileSync(jsonPath, 'utf8');
  } catch {
    // not written
  }
  const json = jsonText ? (JSON.parse(jsonText) as JsonReport) : null;
  return {
    code,
    stdout,
    stderr,
    json,
    jsonText,
    finding(id) {
      const found = json?.findings.find((f) => f.id === id);
      if (!found) throw new Error(`no finding ${id}`);
      return found;
    },
  };
}

/** Every form the pair could leak in: as is, URL/form-encoded, base64 alone and as Basic. */
function leakForms({ sysId, authToken }: { sysId: string; authToken: string }): string[] {
  return [sysId, authToken]
    .flatMap((s) => [
      s,
      encodeURIComponent(s),
      new URLSearchParams({ v: s }).toString().slice(2),
      Buffer.from(s).toString('base64'),
      Buffer.from(s).toString('base64url'),
    ])
    .concat(Buffer.from(`${sysId}:${authToken}`).toString('base64'));
}

function expectNoCredentials(run: Run, credentials: { sysId: string; authToken: string }) {
  for (const form of leakForms(credentials)) {
    expect(run.stdout).not.toContain(form);
    expect(run.stderr).not.toContain(form);
    expect(run.jsonText).not.toContain(form);
  }
}

describe.each(['exclusive', 'inclusive'] as const)(
  'the simulator reading history_end as %s',
  (historyEnd) => {
    let simulator: Awaited<ReturnType<typeof startRecordingUpstream>>;
    let run: Run;
    beforeAll(async () => {
      simulator = await startRecordingUpstream({ historyEnd });
      run = await doctor(simulator.url, DEMO_CREDENTIALS);
    });
    afterAll(() => simulator.close());

    it('answers every question, with stable ids, in the JSON shape documented', () => {
      expect(run.json?.findings.map((f) => f.id)).toEqual(EVERY_ID);
      for (const f of run.json?.findings ?? []) {
        expect(Object.keys(f)).toEqual(
          expect.arrayContaining([
            'id',
            'question',
            'answer',
            'evidence',
            'gatewayAssumes',
            'holds',
          ]),
        );
      }
      expect(run.json?.calls).toBe(40);
      expect(simulator.calls).toHaveLength(40);
    });

    it(`finds history_end ${historyEnd} from overlapping ranges, and names what to set`, () => {
      const end = run.finding('history.end');
      expect(end.answer).toBe(historyEnd);
      expect(end.holds).toBe(historyEnd === 'exclusive');
      expect(end.set).toBe(historyEnd === 'exclusive' ? '' : 'UPSTREAM_HISTORY_END=inclusive');
      expect(end.evidence.join('\n')).toMatch(
        historyEnd === 'exclusive'
          ? /history_end=1 gave 1 message\(s\), position\(s\) 0\n.*history_end=2 gave 1 message\(s\), position\(s\) 1/
          : /history_end=1 gave 2 message\(s\), position\(s\) 0, 1\n.*history_end=2 gave 2 message\(s\), position\(s\) 1, 2/,
      );
      // Exit 1 exactly when history.end does not hold: every other finding does.
      expect(run.code).toBe(historyEnd === 'exclusive' ? 0 : 1);
      expect(run.json?.exitCode).toBe(run.code);
      expect(run.json?.findings.filter((f) => f.holds !== true).map((f) => f.id)).toEqual(
        historyEnd === 'exclusive' ? [] : ['history.end'],
      );
    });

    it('reads ranges past the total, beyond it and reversed as the simulator answers them', () => {
      expect(run.finding('history.pastTotal').answer).toBe('1 message(s), success "1"');
      expect(run.finding('history.startBeyondTotal').answer).toBe(
        '0 message(s), total_message_count 450',
      );
      expect(run.finding('history.reversed').answer).toMatch(/^HTTP 400, application\/json/);
    });

    it('reads the errors: 401 for an invented pair, 400 for a missing parameter', () => {
      expect(run.finding('errors.wrongCredentials').answer).toMatch(
        /^HTTP 401, application\/json, \{ success "0", error "invalid credentials" \}$/,
      );
      expect(run.finding('errors.missingParameter').answer).toMatch(
        /^HTTP 400, application\/json, .*missing parameter: history_end/,
      );
      // The invented pair, not a variation of the real one, reached the service.
      const refused = simulator.calls.filter((c) => c.accountSysId === null);
      expect(refused).toHaveLength(1);
    });

    it('reads the values, content types, limits, timestamps, phone shapes and latency', () => {
      expect(run.finding('contentTypes').answer).toBe('application/json x40');
      expect(run.finding('rateLimit').answer).toBe('no 429 in 40 calls; no limit headers');
      expect(run.finding('fields.extra').answer).toBe('none');
      expect(run.finding('fields.missing').answer).toBe('none');
      expect(run.finding('values.direction').answer).toMatch(/^"outbound" x\d+, "inbound" x\d+$/);
      expect(run.finding('values.type').answer).toMatch(/"local" x\d+, "tollfree" x\d+/);
      expect(run.finding('values.optin').answer).toMatch(/"yes" x\d+/);
      expect(run.finding('values.status').answer).toMatch(/"200" x\d+, "400" x\d+/);
      expect(run.finding('values.mms').answer).toMatch(/"no" x\d+, "yes" x\d+/);
      expect(run.finding('timestamps').answer).toMatch(/^YYYY-MM-DD HH:MM:SS/);
      expect(run.finding('phoneNumbers').answer).toMatch(
        /^owned: d\{11\} x\d+; other party: d\{11\} x\d+$/,
      );
      const latency = run.finding('latency');
      expect(latency.answer).toMatch(/suggested UPSTREAM_TIMEOUT_MS \d+/);
      expect(latency.evidence.join('\n')).toMatch(
        /smshistory: p50 \d+ ms, p99 \d+ ms over \d+ call/,
      );
    });

    it('prints the table with every finding, and writes no credential anywhere', () => {
      for (const id of EVERY_ID) expect(run.stdout).toContain(`${id}:`);
      expect(run.stdout).toMatch(/Question +\| Answer +\| Gateway assumes +\| Holds \| Set/);
      expect(run.stderr).toBe('');
      expectNoCredentials(run, DEMO_CREDENTIALS);
    });
  },
);

describe('the gateway told what the doctor found', () => {
  it('holds on an inclusive service once UPSTREAM_HISTORY_END=inclusive is set: exit 0', async () => {
    const simulator = await startRecordingUpstream({ historyEnd: 'inclusive' });
    try {
      const run = await doctor(simulator.url, DEMO_CREDENTIALS, FAST, {
        UPSTREAM_HISTORY_END: 'inclusive',
      });
      expect(run.finding('history.end')).toMatchObject({
        answer: 'inclusive',
        holds: true,
        set: '',
      });
      expect(run.code).toBe(0);
    } finally {
      await simulator.close();
    }
  });
});

// ---------------------------------------------------------------------------
// Scripted services

const REAL = { sysId: 'ACdoctor7f3a9c1e5b', authToken: 'tok/doctor+secret=9c1e5b' };

function authorised(call: ScriptedCall): boolean {
  return (
    call.params.get('sys_id') === REAL.sysId && call.params.get('auth_token') === REAL.authToken
  );
}

interface QuirkyOptions {
  readonly messages: number;
}

/**
 * A service that breaks assumptions: an unknown number type and an extra field, an invented
 * pair accepted with a vague failure, ISO timestamps, an unknown direction, a 429 (Retry-After 0)
 * on the third history call, and a missing-parameter error that echoes the credentials.
 */
function quirkyService({ messages }: QuirkyOptions): (call: ScriptedCall) => ScriptedReply {
  let histories = 0;
  return (call) => {
    if (!authorised(call)) {
      return { json: { success: '0', error: 'Something went wrong' } };
    }
    if (call.operation !== 'smshistory') {
      return {
        json: {
          success: '1',
          data: [
            { number: '+15125550100', tid: 'T-1', type: 'mobile', webhook: '', carrier: 'x' },
            { number: '+15125550101', tid: 'T-2', type: 'local', webhook: '' },
          ],
        },
      };
    }
    histories += 1;
    if (histories === 3)
      return { status: 429, json: { success: '0' }, headers: { 'retry-after': '0' } };
    const start = Number(call.params.get('history_start'));
    const rawEnd = call.params.get('history_end');
    if (rawEnd === null)
      return {
        status: 400,
        json: { success: '0', error: `missing history_end for ${REAL.sysId} / ${REAL.authToken}` },
      };
    const end = Math.min(Number(rawEnd), messages);
    const list = Array.from({ length: Math.max(0, end - start) }, (_, i) => ({
      system_id: start + i,
      message_id: (start + i).toString(16).padStart(32, '0'),
      GMTdate: '2026-11-23T10:00:00Z',
      tid: call.params.get('tid'),
      phone: '+15125550199',
      direction: 'sent',
      body: 'hello',
      mms: 'no',
      mms_url: '',
      status: 'delivered',
    }));
    return {
      json: {
        success: '1',
        'message_count_requested ': Math.max(0, end - start),
        total_message_count: messages,
        created_date: '2026-01-01 00:00:00',
        most_recent_msg_id: 1,
        most_recent_date: '2026-11-23 10:00:00',
        tid: call.params.get('tid'),
        number: call.params.get('number'),
        optin: 'yes',
        messages: list,
      },
    };
  };
}

describe('a service that breaks assumptions', () => {
  let upstream: ScriptedUpstream;
  let run: Run;
  beforeAll(async () => {
    upstream = await startScriptedUpstream(quirkyService({ messages: 12 }));
    run = await doctor(upstream.url, REAL);
  });
  afterAll(() => upstream.close());

  it('exits 1 and names each assumption that does not hold', () => {
    expect(run.code).toBe(1);
    const failing = run.json?.findings.filter((f) => f.holds === false).map((f) => f.id);
    expect(failing).toEqual([
      'errors.wrongCredentials',
      'values.direction',
      'values.type',
      'values.status',
      'timestamps',
    ]);
    expect(run.stdout).toMatch(/errors\.wrongCredentials \(NO\):/);
  });

  it('says what it saw: the 429 and its retry, the extra field, the phone shapes', () => {
    expect(run.finding('rateLimit')).toMatchObject({
      answer: `HTTP 429 on 1 of 40 calls`,
      holds: true,
    });
    expect(run.finding('rateLimit').evidence.join('\n')).toMatch(/Retry-After 0/);
    expect(run.finding('fields.extra').answer).toBe('owned number: carrier');
    expect(run.finding('values.direction').evidence[0]).toMatch(/not read as intended: "sent"/);
    expect(run.finding('phoneNumbers').answer).toMatch(
      /^owned: \+d\{11\} x\d+; other party: \+d\{11\} x\d+$/,
    );
    expect(run.finding('history.end').answer).toBe('exclusive');
    expect(upstream.calls).toHaveLength(40);
  });

  it('never writes the credentials, even where the service echoes them', () => {
    expect(run.finding('errors.missingParameter').answer).toContain('[redacted]');
    expectNoCredentials(run, REAL);
  });
});

describe('when the service cannot be asked: exit 2 and why', () => {
  const cases: [string, ScriptedReply, RegExp][] = [
    [
      'an HTML page',
      { text: '<html><body>Welcome</body></html>', contentType: 'text/html' },
      /answer is not JSON \(HTTP 200, text\/html\): is UPSTREAM_URL the service's base URL\?/,
    ],
    [
      '429 on every call',
      { status: 429, text: '', headers: { 'retry-after': '0' } },
      /rate limiting this account \(HTTP 429, Retry-After 0\)/,
    ],
    [
      'refused credentials',
      { status: 401, json: { success: '0' } },
      /refused SMS_SYS_ID \/ SMS_AUTH_TOKEN \(HTTP 401\)/,
    ],
    [
      'a refusal in the body',
      { json: { success: '0', error: 'Invalid auth token' } },
      /refused SMS_SYS_ID \/ SMS_AUTH_TOKEN \(HTTP 200, success "0"\)/,
    ],
    [
      'a server error',
      { status: 500, text: 'oops', contentType: 'text/plain' },
      /not JSON \(HTTP 500, text\/plain\)/,
    ],
  ];
  it.each(cases)('%s', async (_name, reply, why) => {
    const upstream = await startScriptedUpstream(() => reply);
    try {
      const run = await doctor(upstream.url, REAL);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^Could not ask the service: /);
      expect(run.stderr).toMatch(why);
      expect(run.stdout).toBe('');
      expect(run.json).toMatchObject({ exitCode: 2, findings: [] });
      expect(run.json?.couldNotAsk).toMatch(why);
      // At most the first call and its one retry after a 429.
      expect(upstream.calls.length).toBeLessThanOrEqual(2);
      expectNoCredentials(run, REAL);
    } finally {
      await upstream.close();
    }
  });

  it('nothing listening', async () => {
    const run = await doctor(`http://127.0.0.1:${await freePort()}`, REAL);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/could not reach UPSTREAM_URL: no answer \(ECONNREFUSED\)/);
  });

  it('no credentials in the environment, or bad options: nothing is called', async () => {
    let stderr = '';
    const code = await runDoctor({
      argv: [],
      env: { UPSTREAM_URL: 'http://127.0.0.1:9' },
      out: () => {},
      err: (text) => (stderr += text),
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/SMS_SYS_ID is not set[\s\S]*SMS_AUTH_TOKEN is not set/);
    for (const [argv, message] of [
      [['--max-calls', '0'], /--max-calls must be a whole number from 1 to 1000/],
      [['--rate', 'fast'], /--rate must be a number/],
      [['--sys-id=ACsecret'], /unknown option: .* credentials come from the environment only/],
      [['ACsecret'], /takes no arguments besides its options/],
    ] as const) {
      let err = '';
      const refused = await runDoctor({
        argv,
        env: { UPSTREAM_URL: 'http://127.0.0.1:9', SMS_SYS_ID: 'a', SMS_AUTH_TOKEN: 'b' },
        out: () => {},
        err: (text) => (err += text),
      });
      expect(refused).toBe(2);
      expect(err).toMatch(message);
      expect(err).not.toContain('ACsecret');
    }
  });
});

describe('bounds', () => {
  it('--max-calls caps the calls; what it could not ask says so', async () => {
    const simulator = await startRecordingUpstream();
    try {
      const run = await doctor(simulator.url, DEMO_CREDENTIALS, [...FAST, '--max-calls', '4']);
      expect(simulator.calls).toHaveLength(4);
      // allownednumbers, then 0..5, 0..1 and 1..2 on the first number: history.end first.
      expect(run.finding('history.end').answer).toBe('exclusive');
      expect(run.finding('history.pastTotal')).toMatchObject({
        answer: 'not asked: the budget of 4 calls was spent (--max-calls)',
        holds: null,
      });
      expect(run.code).toBe(0);
    } finally {
      await simulator.close();
    }
  });

  it('--rate spaces the calls: 6 calls at 20 a second take about 250 ms (5 gaps of 50 ms)', async () => {
    const simulator = await startRecordingUpstream();
    try {
      const started = performance.now();
      await doctor(simulator.url, DEMO_CREDENTIALS, ['--rate', '20', '--max-calls', '6']);
      // Node times timers from the loop's cached clock, so a gap may end a little early by the
      // wall clock (249.7 ms seen in a clean run); unspaced, the 6 calls take about 10 ms.
      expect(performance.now() - started).toBeGreaterThanOrEqual(200);
      expect(simulator.calls).toHaveLength(6);
    } finally {
      await simulator.close();
    }
  });

  it('waits for each call 15 s, or as long as the gateway would (UPSTREAM_TIMEOUT_MS) if longer', () => {
    expect(callDeadlineMs(10_000)).toBe(15_000);
    expect(callDeadlineMs(40_000)).toBe(40_000);
  });

  it('says unknown for history.end when no number has three messages', async () => {
    const upstream = await startScriptedUpstream(quirkyService({ messages: 2 }));
    try {
      const run = await doctor(upstream.url, REAL);
      expect(run.finding('history.end')).toMatchObject({ answer: 'unknown', holds: null });
      expect(run.finding('history.end').evidence[0]).toMatch(/most messages one had was 2/);
    } finally {
      await upstream.close();
    }
  });
});

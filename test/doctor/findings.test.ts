/** The doctor's findings on hand-built observations, no service; doctor.test.ts runs them end to end. */
import { describe, expect, it } from 'vitest';
import type { Answer } from '../../src/doctor/caller.js';
import type { HistoryEndReading } from '../../src/config/config.js';
import { describeAnswer, findingsFrom, shape, type Finding } from '../../src/doctor/findings.js';
import type { EndProbe, Json, Observations } from '../../src/doctor/probes.js';

const answer = (overrides: Partial<Answer> = {}): Answer => ({
  operation: 'smshistory',
  label: 'history 0..5',
  status: 200,
  failure: null,
  contentType: 'application/json',
  limitHeaders: {},
  ms: 10,
  json: { success: '1' },
  bytes: 16,
  ...overrides,
});

const message = (overrides: Json = {}): Json => ({
  system_id: 'sys-fake',
  message_id: 'm-1',
  GMTdate: '2026-01-02 03:04:05',
  tid: 't-1',
  phone: '15550000001',
  direction: 'outbound',
  body: 'hello',
  mms: 'no',
  mms_url: '',
  status: '200 Delivered',
  ...overrides,
});

const without = (object: Json, key: string): Json =>
  Object.fromEntries(Object.entries(object).filter(([k]) => k !== key));

const historyAnswer = (messages: Json[], fields: Json = {}): Answer =>
  answer({ json: { success: '1', total_message_count: '3', messages, ...fields } });
/** Observations holding one history answer with these messages (and fields of its own). */
const history = (messages: Json[], fields: Json = {}): Partial<Observations> => ({
  histories: [historyAnswer(messages, fields)],
});
const owned = (data: Json[]): Answer =>
  answer({
    operation: 'allownednumbers',
    label: 'all owned numbers',
    json: { success: '1', data },
  });

const observations = (overrides: Partial<Observations>): Observations => ({
  owned: owned([]),
  numbers: [],
  typed: [],
  histories: [],
  end: null,
  endSearch: { looked: 0, mostMessages: 0 },
  pastTotal: null,
  beyondTotal: null,
  reversed: null,
  wrongCredentials: null,
  missingParameter: null,
  answers: [],
  callsMade: 3,
  maxCalls: 40,
  ...overrides,
});

function find(
  seen: Partial<Observations>,
  id: string,
  historyEnd: HistoryEndReading = 'exclusive',
): Finding {
  const all = findingsFrom(observations(seen), { historyEnd, timeoutMs: 15_000 });
  const found = all.find((f) => f.id === id);
  if (!found) throw new Error(`no finding ${id}`);
  return found;
}

const end = (zeroToOne: string[] | null, oneToTwo: string[] | null): Partial<Observations> => ({
  end: { tid: 't-1', total: 3, reference: ['a', 'b', 'c'], zeroToOne, oneToTwo } satisfies EndProbe,
});

describe('findingsFrom: history ranges', () => {
  it('says it could not tell, never that something fails, when nothing was observed', () => {
    const all = findingsFrom(observations({}), { historyEnd: 'exclusive', timeoutMs: 15_000 });
    expect(all.filter((f) => f.holds !== null).map((f) => [f.id, f.holds])).toEqual([
      ['rateLimit', true],
      ['fields.extra', true],
      ['phoneNumbers', true],
    ]);
    expect(find({}, 'history.pastTotal').answer).toBe('not asked: the account has no numbers');
    expect(find({ callsMade: 40 }, 'errors.wrongCredentials').answer).toBe(
      'not asked: the budget of 40 calls was spent (--max-calls)',
    );
    expect(find({ endSearch: { looked: 4, mostMessages: 2 } }, 'history.end').evidence[0]).toMatch(
      /^looked at 4 number\(s\): the most messages one had was 2;/,
    );
  });

  it('says why a probe was not asked: no numbers, no message, or else the budget', () => {
    const budget = 'not asked: the budget of 40 calls was spent (--max-calls)';
    expect(find({}, 'errors.missingParameter').answer).toBe(
      'not asked: the account has no numbers',
    );
    expect(find({ numbers: [{ tid: 't-1' }] }, 'errors.missingParameter').answer).toBe(budget);
    // The timing samples spend the budget whenever there are numbers, messages or not.
    const silent = { numbers: [{ tid: 't-1' }, { tid: 't-2' }], callsMade: 40 };
    expect(
      find({ ...silent, endSearch: { looked: 2, mostMessages: 0 } }, 'history.reversed').answer,
    ).toBe('not asked: none of the 2 number(s) looked at has a message');
    expect(
      find({ ...silent, endSearch: { looked: 1, mostMessages: 3 } }, 'history.pastTotal').answer,
    ).toBe(budget);
    expect(
      find({ ...silent, endSearch: { looked: 0, mostMessages: 0 } }, 'history.pastTotal').answer,
    ).toBe(budget);
  });

  it('reads history_end as exclusive from one message in each range, as the gateway assumes', () => {
    const found = find(end(['a'], ['b']), 'history.end');
    expect(found).toMatchObject({ answer: 'exclusive', holds: true, set: '' });
    expect(found.evidence[1]).toBe(
      'history_start=0, history_end=1 gave 1 message(s), position(s) 0',
    );
  });

  it('reads history_end as inclusive from overlapping pairs and names what to set', () => {
    const found = find(end(['a', 'b'], ['b', 'c']), 'history.end');
    expect(found).toMatchObject({ holds: false, set: 'UPSTREAM_HISTORY_END=inclusive' });
    expect(found.evidence[2]).toMatch(/history_end=2 gave 2 message\(s\), position\(s\) 1, 2$/);
    const told = find(end(['a', 'b'], ['b', 'c']), 'history.end', 'inclusive');
    expect(told).toMatchObject({ answer: 'inclusive', holds: true, set: '' });
  });

  it('calls history_end unknown when the ranges fit neither reading, and sets nothing', () => {
    const found = find(end(['a'], null), 'history.end');
    expect(found).toMatchObject({ answer: 'unknown', holds: null, set: '' });
    expect(found.evidence.slice(2)).toEqual([
      'history_start=1, history_end=2 gave no answer',
      'neither reading explains these answers: the two ranges should hold 1 or 2 messages each',
    ]);
  });

  it('expects one message past the total, and an empty page with its counts beyond it', () => {
    const past = (a: Answer) => find({ pastTotal: a }, 'history.pastTotal');
    expect(past(historyAnswer([message()]))).toMatchObject({
      answer: '1 message(s), success "1"',
      holds: true,
    });
    expect(past(answer({ json: { success: '0', error: 'out of range' } }))).toMatchObject({
      answer: 'a failure: HTTP 200, application/json, { success "0", error "out of range" }',
      holds: false,
    });
    const beyond = (a: Answer) => find({ beyondTotal: a }, 'history.startBeyondTotal');
    expect(beyond(historyAnswer([])).holds).toBe(true);
    expect(beyond(answer({ json: { success: '1', messages: [] } }))).toMatchObject({
      answer: '0 message(s), total_message_count absent',
      holds: false,
    });
  });

  it('holds whatever a reversed range gets, since the gateway never sends one', () => {
    const error = answer({ status: 400, json: { success: '0' } });
    expect(find({ reversed: error }, 'history.reversed')).toMatchObject({
      answer: 'HTTP 400, application/json, { success "0" }',
      holds: true,
    });
  });
});

describe('findingsFrom: errors and the protocol', () => {
  it('holds when an invented pair gets a 401 or an error about credentials, and warns if accepted', () => {
    const refused = (a: Answer) => find({ wrongCredentials: a }, 'errors.wrongCredentials');
    expect(refused(answer({ status: 401 })).holds).toBe(true);
    expect(refused(answer({ json: { success: '0', error: 'invalid auth token' } })).holds).toBe(
      true,
    );
    expect(refused(answer({ json: { success: '0', error: 'try later' } })).holds).toBe(false);
    const accepted = refused(answer());
    expect(accepted.holds).toBe(false);
    expect(accepted.evidence[1]).toMatch(/^the invented pair was accepted/);
  });

  it('expects a missing parameter to fail, by status, by success or by no answer at all', () => {
    const holds = (a: Answer) => find({ missingParameter: a }, 'errors.missingParameter').holds;
    expect(holds(answer({ status: 400 }))).toBe(true);
    expect(holds(answer({ json: { success: '0' } }))).toBe(true);
    expect(holds(answer({ status: null, failure: 'timed out' }))).toBe(true);
    expect(holds(answer())).toBe(false);
  });

  it('fails content types only for a 2xx body that is not JSON; error pages are only noted', () => {
    const html = answer({ label: 'history 0..1', contentType: 'text/html', json: undefined });
    const lost = answer({ status: null, failure: 'refused' });
    const types = find({ answers: [answer(), answer(), html, lost] }, 'contentTypes');
    expect(types).toMatchObject({ answer: 'application/json x2, text/html x1', holds: false });
    expect(types.evidence).toEqual(['history 0..1: HTTP 200, text/html, not JSON']);
    const errorPage = answer({
      label: 'history 1..2',
      status: 502,
      contentType: null,
      json: undefined,
    });
    expect(find({ answers: [errorPage] }, 'contentTypes')).toMatchObject({
      holds: true,
      evidence: ['history 1..2: HTTP 502, no content type, not JSON (an error; never parsed)'],
    });
  });

  it('fails rate limits only on an unreadable Retry-After, and notes 429s without one', () => {
    const limited = (limitHeaders: Record<string, string>) =>
      answer({ label: 'history 0..20 (timing)', status: 429, limitHeaders });
    const headers = { 'retry-after': '2', 'x-ratelimit-remaining': '0' };
    const found = find({ callsMade: 7, answers: [limited(headers), limited({})] }, 'rateLimit');
    expect(found).toMatchObject({ answer: 'HTTP 429 on 2 of 7 calls', holds: true });
    expect(found.evidence.slice(1)).toEqual([
      'history 0..20 (timing): HTTP 429, Retry-After 2',
      'history 0..20 (timing): HTTP 429, Retry-After absent',
      'limit headers seen: retry-after, x-ratelimit-remaining (the gateway reads only Retry-After)',
      'no Retry-After on 1 of the 429s: the gateway pauses the account 5000 ms after each (a fixed value)',
    ]);
    expect(find({ answers: [limited({ 'retry-after': 'soon' })] }, 'rateLimit').holds).toBe(false);
  });
});

describe('findingsFrom: fields and values', () => {
  it('lists undocumented fields without failing, and counts the spaced requested-count key', () => {
    const seen = history([message({ price: '0.01' })], { 'message_count_requested ': '5' });
    const found = find(
      { ...seen, owned: owned([{ number: '1', tid: 't', carrier: 'x' }]) },
      'fields.extra',
    );
    expect(found).toMatchObject({ answer: 'message: price; owned number: carrier', holds: true });
    expect(found.evidence[1]).toBe(
      '`message_count_requested ` with its trailing space in 1 of 1 history answers',
    );
  });

  it('fails missing fields only for one the gateway needs, and lists optional ones left out', () => {
    const optional = find(history([without(message(), 'body')]), 'fields.missing');
    expect(optional.holds).toBe(true);
    expect(optional.answer).toMatch(/^history answer: created_date, .*; message: body$/);
    const required = find(history([without(message(), 'phone')]), 'fields.missing');
    expect(required).toMatchObject({ holds: false, evidence: ['message: phone'] });
  });

  it('counts the values of each field and names those the gateway would not read as intended', () => {
    const odd = message({ direction: 'sent', status: 'Delivered', mms: 'yes' });
    const seen = history([message(), odd], { optin: 'yes' });
    const direction = find(seen, 'values.direction');
    expect(direction).toMatchObject({ answer: '"outbound" x1, "sent" x1', holds: false });
    expect(direction.evidence[0]).toBe('2 value(s) seen; not read as intended: "sent"');
    expect(find(seen, 'values.status')).toMatchObject({
      answer: '"200" x1, aaaaaaaaa x1',
      holds: false,
    });
    expect(find(seen, 'values.optin')).toMatchObject({ answer: '"yes" x1', holds: true });
    const mms = find(seen, 'values.mms');
    expect(mms).toMatchObject({ answer: '"no" x1, "yes" x1', holds: true });
    expect(mms.evidence[1]).toBe('1 of 2 messages have a flag that disagrees with mms_url');
  });

  it('leaves a missing status to fields.missing, and shows a status without a code by its shape', () => {
    const missing = history([message(), without(message(), 'status')]);
    expect(find(missing, 'values.status')).toMatchObject({ answer: '"200" x1', holds: true });
    const fieldsMissing = find(missing, 'fields.missing');
    expect(fieldsMissing.answer).toMatch(/; message: status$/);
    expect(fieldsMissing.holds).toBe(true);
    const odd = [null, 'Sent to 5550100', '', 7].map((status) => message({ status }));
    const found = find(history([message(), ...odd]), 'values.status');
    expect(found).toMatchObject({
      answer: '"200" x1, null x1, aaaa aa d{7} x1, empty x1, d x1',
      holds: false,
    });
    expect(found.evidence[0]).toBe(
      '5 value(s) seen; not read as intended: null, aaaa aa d{7}, empty, d',
    );
    expect(JSON.stringify(found)).not.toMatch(/Sent|555/);
    // An integer is read as its decimal text, as the gateway's wire reader reads it.
    const numeric = find(history([message(), message({ status: 200 })]), 'values.status');
    expect(numeric).toMatchObject({ answer: '"200" x2', holds: true });
  });

  it('notes numbers of another type in a typed list and fails on a type it cannot read', () => {
    const typed = [{ type: 'local', answer: owned([{ type: 'local' }, { type: 'Toll Free' }]) }];
    const found = find({ typed }, 'values.type');
    expect(found).toMatchObject({ answer: '"local" x1, "Toll Free" x1', holds: false });
    expect(found.evidence[1]).toBe(
      'ownednumbers local: 2 number(s), 1 of another type (the gateway filters them out)',
    );
  });

  it('reads timestamps as UTC, allows the zero date outside messages, and tells the newest age', () => {
    const at = (hours: number) =>
      new Date(Date.now() + hours * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const zero = '0000-00-00 00:00:00';
    const good = find(
      history([message({ GMTdate: at(-3) })], { created_date: zero }),
      'timestamps',
    );
    expect(good).toMatchObject({ answer: 'YYYY-MM-DD HH:MM:SS (zone: see evidence)', holds: true });
    expect(good.evidence[1]).toMatch(/^read as UTC, the newest message is 3\.0 h old/);
    const messages = [message({ GMTdate: zero }), message({ GMTdate: at(2) })];
    const bad = find(history(messages, { most_recent_date: 1767322800 }), 'timestamps');
    expect(bad).toMatchObject({ answer: '2 of 3 in another format', holds: false });
    expect(bad.evidence).toEqual([
      '3 timestamps read; 2 not YYYY-MM-DD HH:MM:SS (GMTdate, most_recent_date)',
      expect.stringMatching(/the newest message is 2\.0 h in the future/),
    ]);
  });

  it('reports phone number shapes, never the numbers', () => {
    const seen = history([message({ phone: '(555) 000-0001' })]);
    const found = find({ ...seen, owned: owned([{ number: '+15550000001' }]) }, 'phoneNumbers');
    expect(found.answer).toBe('owned: +d{11} x1; other party: (d{3}) d{3}-d{4} x1');
    expect(JSON.stringify(found)).not.toMatch(/555/);
  });

  it('holds latency when 3 x the slowest p99 fits the timeout, else sets one rounded to 500 ms', () => {
    const timed = (operation: Answer['operation'], ms: number) => answer({ operation, ms });
    const answers = [timed('smshistory', 100), timed('smshistory', 300), timed('ownednumbers', 50)];
    const fast = find({ answers: [...answers, answer({ status: null, ms: 99_999 })] }, 'latency');
    expect(fast).toMatchObject({
      answer: 'p99 at most 300 ms; suggested UPSTREAM_TIMEOUT_MS 1000',
      holds: true,
      set: '',
    });
    expect(fast.evidence).toEqual([
      'smshistory: p50 100 ms, p99 300 ms over 2 call(s)',
      'ownednumbers: p50 50 ms, p99 50 ms over 1 call(s)',
    ]);
    const slow = find({ answers: [timed('allownednumbers', 5_100)] }, 'latency');
    expect(slow).toMatchObject({ holds: false, set: 'UPSTREAM_TIMEOUT_MS=15500' });
  });
});

describe('describeAnswer', () => {
  it('says why there was no answer, or what kind of body came', () => {
    expect(describeAnswer(answer({ status: null, failure: 'connect ECONNREFUSED' }))).toBe(
      'connect ECONNREFUSED',
    );
    expect(describeAnswer(answer({ status: null }))).toBe('no answer');
    const page = answer({ status: 502, contentType: null, json: undefined, bytes: 123 });
    expect(describeAnswer(page)).toBe(
      'HTTP 502, no content type, a 123-byte body that is not JSON',
    );
    expect(describeAnswer(answer({ json: [1] }))).toBe(
      'HTTP 200, application/json, JSON that is not an object',
    );
  });

  it('shows the first eight keys, the success value and at most 40 characters of the error', () => {
    const long = `${'x'.repeat(40)}TAIL`;
    const json = { success: 0, error: long, a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1 };
    expect(describeAnswer(answer({ status: 400, json }))).toBe(
      `HTTP 400, application/json, { success 0, error "${'x'.repeat(40)}", a, b, c, d, e, f }`,
    );
    expect(describeAnswer(answer({ json: { error: { code: 7 } } }))).toBe(
      'HTTP 200, application/json, { error }',
    );
  });
});

describe('shape', () => {
  it.each([
    ['15550000001', 'd{11}'],
    ['+1 (555) 000-0001', '+d (d{3}) d{3}-d{4}'],
    ['555-CALL-NOW', 'd{3}-aaaa-aaa'],
    [15550000001, 'd{11}'],
    ['', 'empty'],
    [undefined, 'absent'],
    [null, 'null'],
    [{}, 'a object'],
    ['1 '.repeat(20), 'd '.repeat(15)],
  ])('shows %j as %j', (value, expected) => {
    expect(shape(value)).toBe(expected);
  });
});

/**
 * Observations -> findings: one per open question of the service's documentation, each with a
 * stable id, the answer, the evidence it rests on, what the gateway assumes and whether that
 * holds. The gateway's own readers (src/upstream/wire.ts) judge the values, so a finding says
 * "holds" exactly when the gateway would read what the service sent as intended.
 */
import type { HistoryEndReading } from '../config/config.js';
import { FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS } from '../config/fixed.js';
import { parseRetryAfter } from '../upstream/client.js';
import {
  HISTORY_REQUESTED_KEY,
  parseDirection,
  parseNumberType,
  parseStatus,
  parseTimestamp,
  parseYesNo,
  refusesCredentials,
  REQUIRED_WIRE_FIELDS,
  WIRE_FIELDS,
} from '../upstream/wire.js';
import type { Answer } from './caller.js';
import { messagesOf, successful, type HistoryProbe, type Observations } from './probes.js';

export interface Finding {
  /** Stable: scripts and docs refer to findings by it. */
  readonly id: string;
  readonly question: string;
  readonly answer: string;
  readonly evidence: readonly string[];
  readonly gatewayAssumes: string;
  /** true: the assumption holds; false: it does not; null: the doctor could not tell. */
  readonly holds: boolean | null;
  /** What to set for the gateway to follow, when something can be set; "" otherwise. */
  readonly set: string;
}

/** What the gateway run with this environment assumes (UPSTREAM_HISTORY_END, UPSTREAM_TIMEOUT_MS). */
export interface GatewayAssumptions {
  readonly historyEnd: HistoryEndReading;
  readonly timeoutMs: number;
}

type Json = Record<string, unknown>;

export function findingsFrom(seen: Observations, gateway: GatewayAssumptions): Finding[] {
  const messages = seen.histories.flatMap((h) => messagesOf(h.answer) ?? []);
  const historyObjects = seen.histories.flatMap((h) => {
    const object = successful(h.answer);
    return object ? [object] : [];
  });
  return [
    historyEnd(seen, gateway),
    pastTotal(seen),
    startBeyondTotal(seen),
    reversed(seen),
    wrongCredentials(seen),
    missingParameter(seen),
    contentTypes(seen),
    rateLimit(seen),
    extraFields(seen, historyObjects, messages),
    missingFields(seen, historyObjects, messages),
    values(
      'values.direction',
      "Values of a message's direction?",
      messages.map((m) => m.direction),
      (v) => typeof v === 'string' && parseDirection(v) !== 'UNKNOWN',
      'outbound, inbound; others served as UNKNOWN',
    ),
    values(
      'values.optin',
      "Values of a history's optin?",
      historyObjects.map((h) => h.optin),
      (v) => parseYesNo(v) !== null,
      'yes/no; others served as null',
    ),
    numberTypes(seen),
    values(
      'values.status',
      "What a message's status holds?",
      messages.map((m) => m.status),
      (v) => statusCode(v) !== null,
      'a 3-digit code, then text (2xx ok)',
      ['a status without a code is shown by its shape (d = a digit, a = a letter), not its text'],
      (v) => {
        const code = statusCode(v);
        return code === null ? shape(v) : `"${code}"`;
      },
    ),
    mms(messages),
    timestamps(historyObjects, messages),
    phoneNumbers(seen, messages),
    latency(seen, gateway),
  ];
}

// ---------------------------------------------------------------------------
// History ranges

function historyEnd(seen: Observations, gateway: GatewayAssumptions): Finding {
  const question = 'Is history_end inclusive or exclusive?';
  const gatewayAssumes = `${gateway.historyEnd} (UPSTREAM_HISTORY_END)`;
  const probe = seen.end;
  if (!probe) {
    const { looked, mostMessages } = seen.endSearch;
    return {
      id: 'history.end',
      question,
      answer: 'unknown',
      evidence: [
        `looked at ${looked} number(s): the most messages one had was ${mostMessages}; telling the readings apart needs one with 3`,
      ],
      gatewayAssumes,
      holds: null,
      set: '',
    };
  }
  const { reference, zeroToOne, oneToTwo } = probe;
  const at = (ids: readonly string[] | null) =>
    ids === null
      ? 'no answer'
      : `${ids.length} message(s)${ids.length > 0 ? `, position(s) ${ids.map((id) => reference.indexOf(id)).join(', ')}` : ''}`;
  const same = (ids: readonly string[] | null, expected: readonly (string | undefined)[]) =>
    ids !== null && ids.length === expected.length && ids.every((id, i) => id === expected[i]);
  const [m0, m1, m2] = reference;
  const reading: HistoryEndReading | 'unknown' =
    same(zeroToOne, [m0]) && same(oneToTwo, [m1])
      ? 'exclusive'
      : same(zeroToOne, [m0, m1]) && same(oneToTwo, [m1, m2])
        ? 'inclusive'
        : 'unknown';
  const evidence = [
    `number ${probe.tid}, ${probe.total} messages; history_start=0, history_end=5 gave ${reference.length} (the reference positions)`,
    `history_start=0, history_end=1 gave ${at(zeroToOne)}`,
    `history_start=1, history_end=2 gave ${at(oneToTwo)}`,
  ];
  if (reading === 'unknown')
    evidence.push(
      'neither reading explains these answers: the two ranges should hold 1 or 2 messages each',
    );
  const holds = reading === 'unknown' ? null : reading === gateway.historyEnd;
  return {
    id: 'history.end',
    question,
    answer: reading,
    evidence,
    gatewayAssumes,
    holds,
    set: reading !== 'unknown' && !holds ? `UPSTREAM_HISTORY_END=${reading}` : '',
  };
}

function pastTotal(seen: Observations): Finding {
  const probe = seen.pastTotal;
  const question = 'A range reaching past the total?';
  const gatewayAssumes = 'the messages that exist, no error (last pages ask past the end)';
  if (!probe) return notAsked('history.pastTotal', question, gatewayAssumes, seen, 'a message');
  const messages = messagesOf(probe.answer);
  return {
    id: 'history.pastTotal',
    question,
    answer: messages ? `${messages.length} message(s), success "1"` : describeFailure(probe.answer),
    evidence: [`${probe.answer.label}: ${describeAnswer(probe.answer)}`],
    gatewayAssumes,
    holds: messages !== null && messages.length === 1,
    set: '',
  };
}

function startBeyondTotal(seen: Observations): Finding {
  const probe = seen.beyondTotal;
  const question = 'A range starting beyond the total?';
  const gatewayAssumes = 'an empty page, with the counts';
  if (!probe)
    return notAsked('history.startBeyondTotal', question, gatewayAssumes, seen, 'a message');
  const messages = messagesOf(probe.answer);
  const total = successful(probe.answer)?.total_message_count;
  return {
    id: 'history.startBeyondTotal',
    question,
    answer: messages
      ? `${messages.length} message(s), total_message_count ${total === undefined ? 'absent' : String(total)}`
      : describeFailure(probe.answer),
    evidence: [`${probe.answer.label}: ${describeAnswer(probe.answer)}`],
    gatewayAssumes,
    holds: messages !== null && messages.length === 0 && total !== undefined,
    set: '',
  };
}

function reversed(seen: Observations): Finding {
  const probe: HistoryProbe | null = seen.reversed;
  const question = 'A reversed range (end < start)?';
  const gatewayAssumes = 'nothing: the gateway never sends one';
  if (!probe) return notAsked('history.reversed', question, gatewayAssumes, seen, 'a message');
  const messages = messagesOf(probe.answer);
  return {
    id: 'history.reversed',
    question,
    answer: messages ? `${messages.length} message(s), success "1"` : describeFailure(probe.answer),
    evidence: [`${probe.answer.label}: ${describeAnswer(probe.answer)}`],
    gatewayAssumes,
    holds: true,
    set: '',
  };
}

// ---------------------------------------------------------------------------
// Errors and the protocol

function wrongCredentials(seen: Observations): Finding {
  const answer = seen.wrongCredentials;
  const question = 'Wrong credentials?';
  const gatewayAssumes = '401/403, or success not "1" with an error about credentials';
  if (!answer)
    return notAsked('errors.wrongCredentials', question, gatewayAssumes, seen, 'nothing');
  const object = asObject(answer.json);
  const refused =
    answer.status === 401 ||
    answer.status === 403 ||
    (object !== null && object.success !== '1' && refusesCredentials(object.error));
  const evidence = [`an invented pair on allownednumbers: ${describeAnswer(answer)}`];
  if (!refused && object?.success === '1')
    evidence.push(
      'the invented pair was accepted: the service may not check credentials on this operation',
    );
  return {
    id: 'errors.wrongCredentials',
    question,
    answer: describeAnswer(answer),
    evidence,
    gatewayAssumes,
    holds: refused,
    set: '',
  };
}

function missingParameter(seen: Observations): Finding {
  const answer = seen.missingParameter;
  const question = 'A missing parameter?';
  const gatewayAssumes = 'non-2xx or success not "1" (never sent by the gateway)';
  if (!answer)
    return notAsked('errors.missingParameter', question, gatewayAssumes, seen, 'a number');
  const failed =
    answer.status === null ||
    answer.status >= 300 ||
    answer.status < 200 ||
    successful(answer) === null;
  return {
    id: 'errors.missingParameter',
    question,
    answer: describeAnswer(answer),
    evidence: [`smshistory without history_end: ${describeAnswer(answer)}`],
    gatewayAssumes,
    holds: failed,
    set: '',
  };
}

function contentTypes(seen: Observations): Finding {
  const answered = seen.answers.filter((a) => a.status !== null);
  const counts = countBy(answered.map((a) => a.contentType ?? '(none)'));
  // The gateway reads the body of every 2xx answer as JSON; others it never parses.
  const unreadable = answered.filter((a) => isOk(a) && a.json === undefined);
  const errorPages = answered.filter((a) => !isOk(a) && a.json === undefined);
  const evidence = unreadable.map(
    (a) => `${a.label}: HTTP ${a.status}, ${a.contentType ?? 'no content type'}, not JSON`,
  );
  for (const a of errorPages.slice(0, 3))
    evidence.push(
      `${a.label}: HTTP ${a.status}, ${a.contentType ?? 'no content type'}, not JSON (an error; never parsed)`,
    );
  if (evidence.length === 0) evidence.push(`every one of ${answered.length} answers was JSON`);
  return {
    id: 'contentTypes',
    question: 'Content types: is every body JSON?',
    answer: formatCounts(counts),
    evidence,
    gatewayAssumes: 'every 2xx body is JSON, whatever the type says',
    holds: answered.length === 0 ? null : unreadable.length === 0,
    set: '',
  };
}

function rateLimit(seen: Observations): Finding {
  const limited = seen.answers.filter((a) => a.status === 429);
  const headerNames = [...new Set(seen.answers.flatMap((a) => Object.keys(a.limitHeaders)))];
  const unreadable = limited.filter((a) => {
    const value = a.limitHeaders['retry-after'];
    return value !== undefined && parseRetryAfter(value, Date.now()) === null;
  });
  const evidence = [
    `${seen.callsMade} calls, one at a time at the doctor's rate`,
    ...limited
      .slice(0, 3)
      .map((a) => `${a.label}: HTTP 429, Retry-After ${a.limitHeaders['retry-after'] ?? 'absent'}`),
  ];
  if (headerNames.length > 0)
    evidence.push(
      `limit headers seen: ${headerNames.join(', ')} (the gateway reads only Retry-After)`,
    );
  const withoutRetryAfter = limited.filter((a) => a.limitHeaders['retry-after'] === undefined);
  if (withoutRetryAfter.length > 0)
    evidence.push(
      `no Retry-After on ${withoutRetryAfter.length} of the 429s: the gateway pauses the account ${FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS} ms after each (a fixed value)`,
    );
  return {
    id: 'rateLimit',
    question: 'Rate limits and their signals?',
    answer:
      limited.length === 0
        ? `no 429 in ${seen.callsMade} calls${headerNames.length > 0 ? `; headers: ${headerNames.join(', ')}` : '; no limit headers'}`
        : `HTTP 429 on ${limited.length} of ${seen.callsMade} calls`,
    evidence,
    gatewayAssumes: '429 with Retry-After pauses the account (else the default pause)',
    holds: unreadable.length === 0,
    set: '',
  };
}

// ---------------------------------------------------------------------------
// Fields and values

function ownedObjects(seen: Observations): Json[] {
  const lists = [seen.owned, ...seen.typed.map((t) => t.answer)].map((a) => successful(a)?.data);
  return lists.flatMap((data) => (Array.isArray(data) ? data.filter(isObject) : []));
}

function extraFields(seen: Observations, histories: Json[], messages: Json[]): Finding {
  const numbersAnswers = [seen.owned, ...seen.typed.map((t) => t.answer)]
    .map((a) => successful(a))
    .filter(isObject);
  const extras = [
    extraKeys('history answer', histories, WIRE_FIELDS.history),
    extraKeys('message', messages, WIRE_FIELDS.message),
    extraKeys('owned numbers answer', numbersAnswers, WIRE_FIELDS.numbers),
    extraKeys('owned number', ownedObjects(seen), WIRE_FIELDS.number),
  ].filter((line) => line !== null);
  const spacedKey = histories.filter((h) => HISTORY_REQUESTED_KEY in h).length;
  return {
    id: 'fields.extra',
    question: 'Fields beyond the documented ones?',
    answer: extras.length === 0 ? 'none' : extras.join('; '),
    evidence: [
      `${histories.length} history answers, ${messages.length} messages, ${ownedObjects(seen).length} owned number records read`,
      `\`message_count_requested \` with its trailing space in ${spacedKey} of ${histories.length} history answers`,
    ],
    gatewayAssumes: 'ignored, never an error',
    holds: true,
    set: '',
  };
}

function missingFields(seen: Observations, histories: Json[], messages: Json[]): Finding {
  const owned = ownedObjects(seen);
  const required = [
    missingKeys('history answer', histories, REQUIRED_WIRE_FIELDS.history),
    missingKeys('message', messages, REQUIRED_WIRE_FIELDS.message),
    missingKeys('owned number', owned, REQUIRED_WIRE_FIELDS.number),
  ].filter((line) => line !== null);
  const optional = [
    missingKeys(
      'history answer',
      histories,
      WIRE_FIELDS.history.filter((k) => !k.startsWith('message_count')),
    ),
    missingKeys('message', messages, WIRE_FIELDS.message),
    missingKeys('owned number', owned, WIRE_FIELDS.number),
  ].filter((line) => line !== null);
  return {
    id: 'fields.missing',
    question: 'Documented fields left out?',
    answer: optional.length === 0 ? 'none' : optional.join('; '),
    evidence: required.length === 0 ? ['every field the gateway needs was present'] : required,
    gatewayAssumes: 'only ones it can do without (see docs/doctor.md)',
    holds: histories.length + messages.length + owned.length === 0 ? null : required.length === 0,
    set: '',
  };
}

function numberTypes(seen: Observations): Finding {
  const owned = ownedObjects(seen);
  const evidence = seen.typed.map((t) => {
    const data = successful(t.answer)?.data;
    const list = Array.isArray(data) ? data.filter(isObject) : [];
    const others = list.filter((n) => String(n.type ?? '').toLowerCase() !== t.type).length;
    return `ownednumbers ${t.type}: ${list.length} number(s)${others > 0 ? `, ${others} of another type (the gateway filters them out)` : ''}`;
  });
  return values(
    'values.type',
    "Values of a number's type?",
    owned.map((n) => n.type),
    (v) => typeof v === 'string' && parseNumberType(v) !== 'UNKNOWN',
    'local, tollfree; others served as UNKNOWN',
    evidence,
  );
}

function mms(messages: Json[]): Finding {
  const inconsistent = messages.filter((m) => {
    const flag = parseYesNo(m.mms);
    const url = typeof m.mms_url === 'string' && m.mms_url !== '';
    return flag !== null && flag !== url;
  }).length;
  return values(
    'values.mms',
    "Values of a message's mms?",
    messages.map((m) => m.mms),
    (v) => parseYesNo(v) !== null,
    'yes/no; others inferred from mms_url',
    [`${inconsistent} of ${messages.length} messages have a flag that disagrees with mms_url`],
  );
}

/** A finding about the values of one field: which were seen, and whether the gateway reads each. */
function values(
  id: string,
  question: string,
  seen: readonly unknown[],
  readable: (value: unknown) => boolean,
  gatewayAssumes: string,
  extraEvidence: readonly string[] = [],
  show: (value: unknown) => string = showValue,
): Finding {
  const present = seen.filter((v) => v !== undefined);
  const counts = countBy(present.map(show));
  const unread = [...new Set(present.filter((v) => !readable(v)).map(show))];
  return {
    id,
    question,
    answer: present.length === 0 ? 'none seen' : formatCounts(counts),
    evidence: [
      `${present.length} value(s) seen${unread.length > 0 ? `; not read as intended: ${unread.join(', ')}` : ''}`,
      ...extraEvidence,
    ],
    gatewayAssumes,
    holds: present.length === 0 ? null : unread.length === 0,
    set: '',
  };
}

function timestamps(histories: Json[], messages: Json[]): Finding {
  const fields: [string, unknown][] = [
    ...messages.map((m): [string, unknown] => ['GMTdate', m.GMTdate]),
    ...histories.flatMap((h): [string, unknown][] => [
      ['created_date', h.created_date],
      ['most_recent_date', h.most_recent_date],
    ]),
  ];
  const present = fields.filter(([, v]) => v !== undefined && v !== null && v !== '');
  const unreadable = present.filter(
    ([name, v]) =>
      typeof v !== 'string' ||
      (parseTimestamp(v) === null && !(name !== 'GMTdate' && v === '0000-00-00 00:00:00')),
  );
  const dates = messages
    .map((m) => (typeof m.GMTdate === 'string' ? parseTimestamp(m.GMTdate) : null))
    .filter((d): d is Date => d !== null);
  const newest = dates.reduce<Date | null>((a, d) => (a === null || d > a ? d : a), null);
  const evidence = [
    `${present.length} timestamps read${unreadable.length > 0 ? `; ${unreadable.length} not YYYY-MM-DD HH:MM:SS (${[...new Set(unreadable.map(([n]) => n))].join(', ')})` : ''}`,
  ];
  if (newest) {
    const hours = (Date.now() - newest.getTime()) / 3_600_000;
    evidence.push(
      `read as UTC, the newest message is ${Math.abs(hours).toFixed(1)} h ${hours >= 0 ? 'old' : 'in the future'} (a whole-hour offset from what you expect points to local time)`,
    );
  }
  return {
    id: 'timestamps',
    question: 'Timestamps: format and zone?',
    answer:
      present.length === 0
        ? 'none seen'
        : unreadable.length === 0
          ? 'YYYY-MM-DD HH:MM:SS (zone: see evidence)'
          : `${unreadable.length} of ${present.length} in another format`,
    evidence,
    gatewayAssumes: 'YYYY-MM-DD HH:MM:SS, read as UTC',
    holds: present.length === 0 ? null : unreadable.length === 0,
    set: '',
  };
}

function phoneNumbers(seen: Observations, messages: Json[]): Finding {
  const owned = countBy(ownedObjects(seen).map((n) => shape(n.number)));
  const parties = countBy(messages.map((m) => shape(m.phone)));
  return {
    id: 'phoneNumbers',
    question: 'Phone number shapes?',
    answer: `owned: ${formatCounts(owned) || 'none'}; other party: ${formatCounts(parties) || 'none'}`,
    evidence: ['shapes: d = a digit; the numbers themselves are not shown'],
    gatewayAssumes: 'served as sent, never reformatted',
    holds: true,
    set: '',
  };
}

function latency(seen: Observations, gateway: GatewayAssumptions): Finding {
  const byOperation = new Map<string, number[]>();
  for (const a of seen.answers) {
    if (a.status === null) continue;
    const list = byOperation.get(a.operation) ?? [];
    list.push(a.ms);
    byOperation.set(a.operation, list);
  }
  const lines = [...byOperation].map(([operation, times]) => {
    const sorted = [...times].sort((x, y) => x - y);
    return {
      operation,
      n: sorted.length,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
    };
  });
  if (lines.length === 0) {
    return {
      id: 'latency',
      question: 'Latency of each operation?',
      answer: 'no answer was timed',
      evidence: [],
      gatewayAssumes: `UPSTREAM_TIMEOUT_MS ${gateway.timeoutMs} is over 3 x p99`,
      holds: null,
      set: '',
    };
  }
  const worst = Math.max(...lines.map((l) => l.p99));
  // Three times the slowest p99, rounded up to 500 ms: room for a retry inside the deadline.
  const suggested = Math.min(600_000, Math.max(1_000, Math.ceil((worst * 3) / 500) * 500));
  const holds = worst * 3 <= gateway.timeoutMs;
  return {
    id: 'latency',
    question: 'Latency of each operation?',
    answer: `p99 at most ${Math.round(worst)} ms; suggested UPSTREAM_TIMEOUT_MS ${suggested}`,
    evidence: lines.map(
      (l) =>
        `${l.operation}: p50 ${Math.round(l.p50)} ms, p99 ${Math.round(l.p99)} ms over ${l.n} call(s)`,
    ),
    gatewayAssumes: `UPSTREAM_TIMEOUT_MS ${gateway.timeoutMs} is over 3 x p99`,
    holds,
    set: holds ? '' : `UPSTREAM_TIMEOUT_MS=${suggested}`,
  };
}

// ---------------------------------------------------------------------------
// Helpers

/**
 * A probe that was not made: it needs one of the account's numbers (or one with a message) and
 * there was none, or else the budget ran out before it (the timing samples spend whatever is
 * left, so a spent budget alone does not say why).
 */
function notAsked(
  id: string,
  question: string,
  gatewayAssumes: string,
  seen: Observations,
  needs: 'a number' | 'a message' | 'nothing',
): Finding {
  const { looked, mostMessages } = seen.endSearch;
  const why =
    needs !== 'nothing' && seen.numbers.length === 0
      ? 'the account has no numbers'
      : needs === 'a message' && looked > 0 && mostMessages === 0
        ? `none of the ${looked} number(s) looked at has a message`
        : `the budget of ${seen.maxCalls} calls was spent (--max-calls)`;
  return {
    id,
    question,
    answer: `not asked: ${why}`,
    evidence: [],
    gatewayAssumes,
    holds: null,
    set: '',
  };
}

function isOk(answer: Answer): boolean {
  return answer.status !== null && answer.status >= 200 && answer.status < 300;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): Json | null {
  return isObject(value) ? value : null;
}

/** Status, content type and the body's shape: keys with `success` and a short `error` text. */
export function describeAnswer(answer: Answer): string {
  if (answer.status === null) return answer.failure ?? 'no answer';
  const parts = [`HTTP ${answer.status}`, answer.contentType ?? 'no content type'];
  const object = asObject(answer.json);
  if (answer.json === undefined) parts.push(`a ${answer.bytes}-byte body that is not JSON`);
  else if (!object) parts.push('JSON that is not an object');
  else {
    const shown = Object.keys(object)
      .slice(0, 8)
      .map((key) => {
        if (key === 'success') return `success ${JSON.stringify(object.success)}`;
        if (key === 'error' && typeof object.error === 'string')
          return `error "${object.error.slice(0, 40)}"`;
        return key;
      });
    parts.push(`{ ${shown.join(', ')} }`);
  }
  return parts.join(', ');
}

function describeFailure(answer: Answer): string {
  const object = asObject(answer.json);
  if (answer.status !== null && isOk(answer) && object && object.success !== '1')
    return `a failure: ${describeAnswer(answer)}`;
  return describeAnswer(answer);
}

/** The code the gateway reads from a status, or null when it finds none. */
/** The code the gateway reads from a status: as wire.ts reads it, an integer is kept as its text. */
function statusCode(status: unknown): number | null {
  if (typeof status === 'number' && Number.isSafeInteger(status)) status = String(status);
  return typeof status === 'string' ? parseStatus(status).code : null;
}

function showValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 30));
  return value === undefined ? 'absent' : (JSON.stringify(value) ?? typeof value);
}

/** A phone number's shape, digits as `d` and runs counted: "d{11}", "+d{11}", "(d{3}) d{3}-d{4}". */
export function shape(value: unknown): string {
  if (typeof value === 'number') value = String(value);
  if (value === null) return 'null';
  if (typeof value !== 'string') return value === undefined ? 'absent' : `a ${typeof value}`;
  if (value === '') return 'empty';
  return value
    .replace(/[A-Za-z]/g, 'a')
    .replace(/\d+/g, (run) => (run.length === 1 ? 'd' : `d{${run.length}}`))
    .slice(0, 30);
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

function formatCounts(counts: Map<string, number>): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([value, n]) => `${value} x${n}`)
    .join(', ');
}

function extraKeys(where: string, objects: Json[], documented: readonly string[]): string | null {
  const extra = [
    ...new Set(objects.flatMap((o) => Object.keys(o)).filter((k) => !documented.includes(k))),
  ];
  return extra.length === 0 ? null : `${where}: ${extra.slice(0, 8).join(', ')}`;
}

function missingKeys(where: string, objects: Json[], keys: readonly string[]): string | null {
  const missing = keys.filter((k) => objects.some((o) => !(k in o)));
  return missing.length === 0 ? null : `${where}: ${missing.join(', ')}`;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? 0;
}

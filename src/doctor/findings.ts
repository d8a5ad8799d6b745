/**
 * Observations -> one finding per open question of the service's documentation. The gateway's
 * own readers (wire.ts) judge the values: "holds" means the gateway reads them as intended.
 */
import type { UpstreamSettings } from '../config/config.js';
import { FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS } from '../config/fixed.js';
import { parseRetryAfter } from '../upstream/client.js';
import {
  HISTORY_REQUESTED_KEY,
  isObject,
  parseDirection,
  parseNumberType,
  parseStatus,
  parseTimestamp,
  parseYesNo,
  refusesCredentials,
  REQUIRED_WIRE_FIELDS,
  WIRE_FIELDS,
  ZERO_TIMESTAMP,
} from '../upstream/wire.js';
import type { Answer } from './caller.js';
import { messagesOf, objectsIn, successful, type Json, type Observations } from './probes.js';

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
export type GatewayAssumptions = Pick<UpstreamSettings, 'historyEnd' | 'timeoutMs'>;

/** What a question's judge says; `set` is "" unless given. */
type Verdict = Pick<Finding, 'answer' | 'evidence' | 'holds'> & { readonly set?: string };

type Gathered = ReturnType<typeof gather>;

type Question = Pick<Finding, 'id' | 'question'> & {
  readonly gatewayAssumes: string | ((gateway: GatewayAssumptions) => string);
  /** What its probe needs; the judge returns null when the probe was not made. */
  readonly needs?: 'a number' | 'a message';
  readonly judge: (gathered: Gathered) => Verdict | null;
};

/** The observations, with the records several questions read gathered once. */
function gather(seen: Observations, gateway: GatewayAssumptions) {
  // The successful allownednumbers and ownednumbers answers, and the numbers they list.
  const numberLists = [seen.owned, ...seen.typed.map((t) => t.answer)]
    .map(successful)
    .filter(isObject);
  return {
    seen,
    gateway,
    histories: seen.histories.map(successful).filter(isObject),
    messages: seen.histories.flatMap((a) => messagesOf(a) ?? []),
    numberLists,
    owned: numberLists.flatMap((list) => objectsIn(list.data)),
  };
}

export function findingsFrom(seen: Observations, gateway: GatewayAssumptions): Finding[] {
  const gathered = gather(seen, gateway);
  return QUESTIONS.map(({ id, question, gatewayAssumes, needs, judge }) => {
    const { answer, evidence, holds, set = '' } = judge(gathered) ?? notAsked(seen, needs);
    const assumes = typeof gatewayAssumes === 'string' ? gatewayAssumes : gatewayAssumes(gateway);
    return { id, question, answer, evidence, gatewayAssumes: assumes, holds, set };
  });
}

const QUESTIONS: readonly Question[] = [
  {
    id: 'history.end',
    question: 'Is history_end inclusive or exclusive?',
    gatewayAssumes: (gateway) => `${gateway.historyEnd} (UPSTREAM_HISTORY_END)`,
    judge: historyEnd,
  },
  {
    id: 'history.pastTotal',
    question: 'A range reaching past the total?',
    gatewayAssumes: 'the messages that exist, no error (last pages ask past the end)',
    needs: 'a message',
    judge: ({ seen }) => range(seen.pastTotal, (messages) => messages?.length === 1),
  },
  {
    id: 'history.startBeyondTotal',
    question: 'A range starting beyond the total?',
    gatewayAssumes: 'an empty page, with the counts',
    needs: 'a message',
    judge: ({ seen }) =>
      range(
        seen.beyondTotal,
        (messages, total) => messages?.length === 0 && total !== undefined,
        (messages, total) =>
          `${messages.length} message(s), total_message_count ${total === undefined ? 'absent' : String(total)}`,
      ),
  },
  {
    id: 'history.reversed',
    question: 'A reversed range (end < start)?',
    gatewayAssumes: 'nothing: the gateway never sends one',
    needs: 'a message',
    judge: ({ seen }) => range(seen.reversed, () => true),
  },
  {
    id: 'errors.wrongCredentials',
    question: 'Wrong credentials?',
    gatewayAssumes: '401/403, or success not "1" with an error about credentials',
    judge: ({ seen }) => seen.wrongCredentials && wrongCredentials(seen.wrongCredentials),
  },
  {
    id: 'errors.missingParameter',
    question: 'A missing parameter?',
    gatewayAssumes: 'non-2xx or success not "1" (never sent by the gateway)',
    needs: 'a number',
    judge: ({ seen: { missingParameter: answer } }) =>
      answer && {
        answer: describeAnswer(answer),
        evidence: [`smshistory without history_end: ${describeAnswer(answer)}`],
        holds: !isOk(answer) || successful(answer) === null,
      },
  },
  {
    id: 'contentTypes',
    question: 'Content types: is every body JSON?',
    gatewayAssumes: 'every 2xx body is JSON, whatever the type says',
    judge: ({ seen }) => contentTypes(seen.answers),
  },
  {
    id: 'rateLimit',
    question: 'Rate limits and their signals?',
    gatewayAssumes: '429 with Retry-After pauses the account (else the default pause)',
    judge: rateLimit,
  },
  {
    id: 'fields.extra',
    question: 'Fields beyond the documented ones?',
    gatewayAssumes: 'ignored, never an error',
    judge: extraFields,
  },
  {
    id: 'fields.missing',
    question: 'Documented fields left out?',
    gatewayAssumes: 'only ones it can do without (see docs/doctor.md)',
    judge: missingFields,
  },
  {
    id: 'values.direction',
    question: "Values of a message's direction?",
    gatewayAssumes: 'outbound, inbound; others served as UNKNOWN',
    judge: ({ messages }) => values(messages, 'direction', known(parseDirection)),
  },
  {
    id: 'values.optin',
    question: "Values of a history's optin?",
    gatewayAssumes: 'yes/no; others served as null',
    judge: ({ histories }) => values(histories, 'optin', (v) => parseYesNo(v) !== null),
  },
  {
    id: 'values.type',
    question: "Values of a number's type?",
    gatewayAssumes: 'local, tollfree; others served as UNKNOWN',
    judge: ({ seen, owned }) =>
      values(
        owned,
        'type',
        known(parseNumberType),
        seen.typed.map(({ type, answer }) => {
          const list = objectsIn(successful(answer)?.data);
          const others = list.filter((n) => String(n.type ?? '').toLowerCase() !== type).length;
          return `ownednumbers ${type}: ${list.length} number(s)${others > 0 ? `, ${others} of another type (the gateway filters them out)` : ''}`;
        }),
      ),
  },
  {
    id: 'values.status',
    question: "What a message's status holds?",
    gatewayAssumes: 'a 3-digit code, then text (2xx ok)',
    judge: ({ messages }) =>
      values(
        messages,
        'status',
        (v) => statusCode(v) !== null,
        ['a status without a code is shown by its shape (d = a digit, a = a letter), not its text'],
        (v) => (statusCode(v) === null ? shape(v) : `"${statusCode(v)}"`),
      ),
  },
  {
    id: 'values.mms',
    question: "Values of a message's mms?",
    gatewayAssumes: 'yes/no; others inferred from mms_url',
    judge: ({ messages }) => {
      const disagree = messages.filter((m) => {
        const flag = parseYesNo(m.mms);
        return flag !== null && flag !== (typeof m.mms_url === 'string' && m.mms_url !== '');
      }).length;
      return values(messages, 'mms', (v) => parseYesNo(v) !== null, [
        `${disagree} of ${messages.length} messages have a flag that disagrees with mms_url`,
      ]);
    },
  },
  {
    id: 'timestamps',
    question: 'Timestamps: format and zone?',
    gatewayAssumes: 'YYYY-MM-DD HH:MM:SS, read as UTC',
    judge: timestamps,
  },
  {
    id: 'phoneNumbers',
    question: 'Phone number shapes?',
    gatewayAssumes: 'served as sent, never reformatted',
    judge: ({ owned, messages }) => ({
      answer: `owned: ${counted(owned.map((n) => shape(n.number))) || 'none'}; other party: ${counted(messages.map((m) => shape(m.phone))) || 'none'}`,
      evidence: ['shapes: d = a digit; the numbers themselves are not shown'],
      holds: true,
    }),
  },
  {
    id: 'latency',
    question: 'Latency of each operation?',
    gatewayAssumes: (gateway) => `UPSTREAM_TIMEOUT_MS ${gateway.timeoutMs} is over 3 x p99`,
    judge: latency,
  },
];

function historyEnd({ seen, gateway }: Gathered): Verdict {
  const probe = seen.end;
  if (!probe) {
    const { looked, mostMessages } = seen.endSearch;
    const evidence = `looked at ${looked} number(s): the most messages one had was ${mostMessages}; telling the readings apart needs one with 3`;
    return { answer: 'unknown', evidence: [evidence], holds: null };
  }
  const { reference, zeroToOne, oneToTwo } = probe;
  const at = (ids: readonly string[] | null) =>
    ids === null
      ? 'no answer'
      : `${ids.length} message(s)${ids.length > 0 ? `, position(s) ${ids.map((id) => reference.indexOf(id)).join(', ')}` : ''}`;
  const same = (ids: readonly string[] | null, expected: readonly string[]) =>
    ids !== null && JSON.stringify(ids) === JSON.stringify(expected);
  // Exclusive: 0..1 and 1..2 hold one message each; inclusive: two each.
  const each = (n: number) =>
    same(zeroToOne, reference.slice(0, n)) && same(oneToTwo, reference.slice(1, 1 + n));
  const reading = each(1) ? 'exclusive' : each(2) ? 'inclusive' : 'unknown';
  const evidence = [
    `number ${probe.tid}, ${probe.total} messages; history_start=0, history_end=5 gave ${reference.length} (the reference positions)`,
    `history_start=0, history_end=1 gave ${at(zeroToOne)}`,
    `history_start=1, history_end=2 gave ${at(oneToTwo)}`,
  ];
  if (reading === 'unknown') {
    evidence.push(
      'neither reading explains these answers: the two ranges should hold 1 or 2 messages each',
    );
    return { answer: reading, evidence, holds: null };
  }
  const holds = reading === gateway.historyEnd;
  return { answer: reading, evidence, holds, set: holds ? '' : `UPSTREAM_HISTORY_END=${reading}` };
}

/** A range's answer: the messages it got (or how it failed), judged by `holds`. */
function range(
  answer: Answer | null,
  holds: (messages: Json[] | null, total: unknown) => boolean,
  describe: (messages: Json[], total: unknown) => string = (messages) =>
    `${messages.length} message(s), success "1"`,
): Verdict | null {
  if (!answer) return null;
  const messages = messagesOf(answer);
  const total = successful(answer)?.total_message_count;
  const failed = isOk(answer) && isObject(answer.json) && answer.json.success !== '1';
  return {
    answer: messages
      ? describe(messages, total)
      : `${failed ? 'a failure: ' : ''}${describeAnswer(answer)}`,
    evidence: [`${answer.label}: ${describeAnswer(answer)}`],
    holds: holds(messages, total),
  };
}

function wrongCredentials(answer: Answer): Verdict {
  const object = isObject(answer.json) ? answer.json : null;
  const refused =
    answer.status === 401 ||
    answer.status === 403 ||
    (object !== null && object.success !== '1' && refusesCredentials(object.error));
  const evidence = [`an invented pair on allownednumbers: ${describeAnswer(answer)}`];
  if (!refused && object?.success === '1')
    evidence.push(
      'the invented pair was accepted: the service may not check credentials on this operation',
    );
  return { answer: describeAnswer(answer), evidence, holds: refused };
}

function contentTypes(answers: readonly Answer[]): Verdict {
  const answered = answers.filter((a) => a.status !== null);
  // The gateway reads the body of every 2xx answer as JSON; others it never parses.
  const unreadable = answered.filter((a) => isOk(a) && a.json === undefined);
  const errorPages = answered.filter((a) => !isOk(a) && a.json === undefined);
  const notJson = (a: Answer) =>
    `${a.label}: HTTP ${a.status}, ${a.contentType ?? 'no content type'}, not JSON`;
  const evidence = [
    ...unreadable.map(notJson),
    ...errorPages.slice(0, 3).map((a) => `${notJson(a)} (an error; never parsed)`),
  ];
  if (evidence.length === 0) evidence.push(`every one of ${answered.length} answers was JSON`);
  return {
    answer: counted(answered.map((a) => a.contentType ?? '(none)')),
    evidence,
    holds: answered.length === 0 ? null : unreadable.length === 0,
  };
}

function rateLimit({ seen }: Gathered): Verdict {
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
    answer:
      limited.length === 0
        ? `no 429 in ${seen.callsMade} calls${headerNames.length > 0 ? `; headers: ${headerNames.join(', ')}` : '; no limit headers'}`
        : `HTTP 429 on ${limited.length} of ${seen.callsMade} calls`,
    evidence,
    holds: unreadable.length === 0,
  };
}

function extraFields({ histories, messages, numberLists, owned }: Gathered): Verdict {
  const extras = [
    extraKeys('history answer', histories, WIRE_FIELDS.history),
    extraKeys('message', messages, WIRE_FIELDS.message),
    extraKeys('owned numbers answer', numberLists, WIRE_FIELDS.numbers),
    extraKeys('owned number', owned, WIRE_FIELDS.number),
  ].filter((line) => line !== null);
  const spacedKey = histories.filter((h) => HISTORY_REQUESTED_KEY in h).length;
  return {
    answer: extras.length === 0 ? 'none' : extras.join('; '),
    evidence: [
      `${histories.length} history answers, ${messages.length} messages, ${owned.length} owned number records read`,
      `\`${HISTORY_REQUESTED_KEY}\` with its trailing space in ${spacedKey} of ${histories.length} history answers`,
    ],
    holds: true,
  };
}

function missingFields({ histories, messages, owned }: Gathered): Verdict {
  const missing = (fields: Record<'history' | 'message' | 'number', readonly string[]>) =>
    [
      missingKeys('history answer', histories, fields.history),
      missingKeys('message', messages, fields.message),
      missingKeys('owned number', owned, fields.number),
    ].filter((line) => line !== null);
  const required = missing(REQUIRED_WIRE_FIELDS);
  const historyFields = WIRE_FIELDS.history.filter((k) => !k.startsWith('message_count'));
  const optional = missing({ ...WIRE_FIELDS, history: historyFields });
  return {
    answer: optional.length === 0 ? 'none' : optional.join('; '),
    evidence: required.length === 0 ? ['every field the gateway needs was present'] : required,
    holds: histories.length + messages.length + owned.length === 0 ? null : required.length === 0,
  };
}

/** The values of one field of `objects`: which were seen, and whether the gateway reads each. */
function values(
  objects: readonly Json[],
  key: string,
  readable: (value: unknown) => boolean,
  extraEvidence: readonly string[] = [],
  show: (value: unknown) => string = showValue,
): Verdict {
  const present = objects.map((o) => o[key]).filter((v) => v !== undefined);
  const unread = [...new Set(present.filter((v) => !readable(v)).map(show))];
  return {
    answer: present.length === 0 ? 'none seen' : counted(present.map(show)),
    evidence: [
      `${present.length} value(s) seen${unread.length > 0 ? `; not read as intended: ${unread.join(', ')}` : ''}`,
      ...extraEvidence,
    ],
    holds: present.length === 0 ? null : unread.length === 0,
  };
}

function timestamps({ histories, messages }: Gathered): Verdict {
  const fields = [
    ...messages.map((m) => ['GMTdate', m.GMTdate] as const),
    ...histories.flatMap((h) => [
      ['created_date', h.created_date] as const,
      ['most_recent_date', h.most_recent_date] as const,
    ]),
  ];
  const present = fields.filter(([, v]) => v !== undefined && v !== null && v !== '');
  const unreadable = present.filter(
    ([name, v]) =>
      typeof v !== 'string' ||
      (parseTimestamp(v) === null && !(name !== 'GMTdate' && v === ZERO_TIMESTAMP)),
  );
  const evidence = [
    `${present.length} timestamps read${unreadable.length > 0 ? `; ${unreadable.length} not YYYY-MM-DD HH:MM:SS (${[...new Set(unreadable.map(([n]) => n))].join(', ')})` : ''}`,
  ];
  const times = messages.flatMap((m) =>
    typeof m.GMTdate === 'string' ? (parseTimestamp(m.GMTdate)?.getTime() ?? []) : [],
  );
  if (times.length > 0) {
    const hours = (Date.now() - Math.max(...times)) / 3_600_000;
    evidence.push(
      `read as UTC, the newest message is ${Math.abs(hours).toFixed(1)} h ${hours >= 0 ? 'old' : 'in the future'} (a whole-hour offset from what you expect points to local time)`,
    );
  }
  return {
    answer:
      present.length === 0
        ? 'none seen'
        : unreadable.length === 0
          ? 'YYYY-MM-DD HH:MM:SS (zone: see evidence)'
          : `${unreadable.length} of ${present.length} in another format`,
    evidence,
    holds: present.length === 0 ? null : unreadable.length === 0,
  };
}

function latency({ seen, gateway }: Gathered): Verdict {
  const answered = seen.answers.filter((a) => a.status !== null);
  const operations = [...new Set(answered.map((a) => a.operation))];
  if (operations.length === 0) return { answer: 'no answer was timed', evidence: [], holds: null };
  const timed = operations.map((operation) => {
    const sorted = answered
      .filter((a) => a.operation === operation)
      .map((a) => a.ms)
      .sort((x, y) => x - y);
    return { operation, sorted, p99: percentile(sorted, 99) };
  });
  const worst = Math.max(...timed.map((t) => t.p99));
  // Three times the slowest p99, rounded up to 500 ms: room for a retry inside the deadline.
  const suggested = Math.min(600_000, Math.max(1_000, Math.ceil((worst * 3) / 500) * 500));
  const holds = worst * 3 <= gateway.timeoutMs;
  return {
    answer: `p99 at most ${Math.round(worst)} ms; suggested UPSTREAM_TIMEOUT_MS ${suggested}`,
    evidence: timed.map(
      ({ operation, sorted, p99 }) =>
        `${operation}: p50 ${Math.round(percentile(sorted, 50))} ms, p99 ${Math.round(p99)} ms over ${sorted.length} call(s)`,
    ),
    holds,
    set: holds ? '' : `UPSTREAM_TIMEOUT_MS=${suggested}`,
  };
}

/** Why a probe was not made; the timing samples spend any budget left, so that alone says nothing. */
function notAsked(seen: Observations, needs: Question['needs']): Verdict {
  const { looked, mostMessages } = seen.endSearch;
  const why =
    needs && seen.numbers.length === 0
      ? 'the account has no numbers'
      : needs === 'a message' && looked > 0 && mostMessages === 0
        ? `none of the ${looked} number(s) looked at has a message`
        : `the budget of ${seen.maxCalls} calls was spent (--max-calls)`;
  return { answer: `not asked: ${why}`, evidence: [], holds: null };
}

function isOk(answer: Answer): boolean {
  return answer.status !== null && answer.status >= 200 && answer.status < 300;
}

/** Status, content type and the body's shape: keys with `success` and a short `error` text. */
export function describeAnswer(answer: Answer): string {
  if (answer.status === null) return answer.failure ?? 'no answer';
  const parts = [`HTTP ${answer.status}`, answer.contentType ?? 'no content type'];
  const object = answer.json;
  if (object === undefined) parts.push(`a ${answer.bytes}-byte body that is not JSON`);
  else if (!isObject(object)) parts.push('JSON that is not an object');
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

/** Whether the gateway reads a value as one of its own, not as UNKNOWN. */
const known = (parse: (text: string) => string) => (value: unknown) =>
  typeof value === 'string' && parse(value) !== 'UNKNOWN';

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

/** The six most frequent values with their counts: `"a" x3, "b" x1`. */
function counted(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
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

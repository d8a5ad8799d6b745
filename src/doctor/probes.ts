/**
 * What the doctor asks the service, in order of importance so a small budget still answers the
 * question that matters most (how `history_end` is read). Every call is a read: the three
 * documented operations, one with an invented pair of credentials, one without `history_end`.
 * The remaining budget goes on timing samples. Nothing here judges: findings.ts does.
 */
import type { Answer, Caller } from './caller.js';
import { BudgetSpent } from './caller.js';
import { refusesCredentials } from '../upstream/wire.js';

type Json = Record<string, unknown>;

/** The service could not be asked at all: the reason is shown and the doctor exits 2. */
export class CouldNotAsk extends Error {
  override readonly name = 'CouldNotAsk';
}

/** A history call: the bounds sent, and what came back. */
export interface HistoryProbe {
  readonly tid: string;
  readonly start: number;
  readonly end: number;
  readonly answer: Answer;
}

/** The number whose history tells the readings apart, and the three reads of it. */
export interface EndProbe {
  readonly tid: string;
  readonly total: number;
  /** Ids of history_start=0, history_end=5: positions 0.. in the service's order. */
  readonly reference: readonly string[];
  /** Ids of 0..1 and 1..2; null when the call failed or was not made. */
  readonly zeroToOne: readonly string[] | null;
  readonly oneToTwo: readonly string[] | null;
}

export interface Observations {
  /** The first call, allownednumbers with the account's credentials. */
  readonly owned: Answer;
  readonly numbers: readonly Json[];
  readonly typed: readonly { readonly type: string; readonly answer: Answer }[];
  readonly histories: readonly HistoryProbe[];
  /** Null when no number has three messages (or the budget ran out first). */
  readonly end: EndProbe | null;
  /** How many numbers were looked at for the end probe, and the most messages one had. */
  readonly endSearch: { readonly looked: number; readonly mostMessages: number };
  readonly pastTotal: (HistoryProbe & { readonly total: number }) | null;
  readonly beyondTotal: (HistoryProbe & { readonly total: number }) | null;
  readonly reversed: HistoryProbe | null;
  readonly wrongCredentials: Answer | null;
  readonly missingParameter: Answer | null;
  /** Every answer, in order (latency samples included). */
  readonly answers: readonly Answer[];
  readonly callsMade: number;
  readonly maxCalls: number;
}

/**
 * An obviously invented pair for the wrong-credentials probe: it owes nothing to the real one,
 * so showing it (it never is) would reveal nothing.
 */
export const INVENTED_CREDENTIALS = {
  sys_id: 'doctor-invented-sys-id-0000',
  auth_token: 'doctor-invented-token-0000',
} as const;

/** Numbers looked at for one with three messages, before giving up on `history.end`. */
const NUMBERS_SEARCHED = 5;
/** The width of the reference read and of each timing sample's history read. */
const REFERENCE_END = 5;
const SAMPLE_END = 20;

export async function runProbes(caller: Caller): Promise<Observations> {
  const owned = await caller.call('allownednumbers', 'all owned numbers', {});
  const numbers = ownedNumbersOf(owned);
  const histories: HistoryProbe[] = [];

  /** One history read, or null when the budget is spent. */
  async function history(
    number: Json,
    start: number,
    end: number | null,
    label?: string,
  ): Promise<HistoryProbe | null> {
    const tid = String(number.tid ?? '');
    const params: Record<string, string> = {
      number: String(number.number ?? ''),
      tid,
      history_start: String(start),
    };
    if (end !== null) params.history_end = String(end);
    try {
      const answer = await caller.call(
        'smshistory',
        label ?? `history ${start}..${end ?? '(none)'}`,
        params,
      );
      const probe = { tid, start, end: end ?? -1, answer };
      if (end !== null) histories.push(probe);
      return probe;
    } catch (error) {
      if (error instanceof BudgetSpent) return null;
      throw error;
    }
  }
  async function optional(run: () => Promise<Answer>): Promise<Answer | null> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof BudgetSpent) return null;
      throw error;
    }
  }

  // 1. history.end: a number with three messages, read at 0..5, 0..1 and 1..2.
  let end: EndProbe | null = null;
  let looked = 0;
  let mostMessages = 0;
  let chosen: { number: Json; total: number } | null = null;
  for (const number of numbers.slice(0, NUMBERS_SEARCHED)) {
    const reference = await history(number, 0, REFERENCE_END);
    if (!reference) break;
    looked += 1;
    const total = totalOf(reference.answer);
    const ids = idsOf(reference.answer);
    if (total !== null && chosen === null && total > 0) chosen = { number, total };
    mostMessages = Math.max(mostMessages, ids?.length ?? 0);
    if (total === null || ids === null || total < 3 || ids.length < 3) continue;
    chosen = { number, total };
    const zeroToOne = await history(number, 0, 1);
    const oneToTwo = await history(number, 1, 2);
    end = {
      tid: String(number.tid ?? ''),
      total,
      reference: ids,
      zeroToOne: zeroToOne ? idsOf(zeroToOne.answer) : null,
      oneToTwo: oneToTwo ? idsOf(oneToTwo.answer) : null,
    };
    break;
  }

  // 2. Ranges at and past the end, and a reversed one, on the same number.
  let pastTotal: Observations['pastTotal'] = null;
  let beyondTotal: Observations['beyondTotal'] = null;
  let reversed: HistoryProbe | null = null;
  if (chosen) {
    const { number, total } = chosen;
    const past = await history(
      number,
      total - 1,
      total + 4,
      `history ${total - 1}..${total + 4} (total ${total})`,
    );
    if (past) pastTotal = { ...past, total };
    const beyond = await history(
      number,
      total + 10,
      total + 15,
      `history ${total + 10}..${total + 15} (total ${total})`,
    );
    if (beyond) beyondTotal = { ...beyond, total };
    reversed = await history(number, 2, 1, 'history 2..1 (reversed)');
  }

  // 3. Errors: an invented pair, and a call without history_end.
  const wrongCredentials = await optional(() =>
    caller.call('allownednumbers', 'invented credentials', INVENTED_CREDENTIALS),
  );
  const first = numbers[0];
  const missing = first ? await history(first, 0, null, 'history without history_end') : null;
  const missingParameter = missing?.answer ?? null;

  // 4. The typed lists.
  const typed: { type: string; answer: Answer }[] = [];
  for (const type of ['local', 'tollfree']) {
    const answer = await optional(() =>
      caller.call('ownednumbers', `owned numbers, ${type}`, { number_type: type }),
    );
    if (answer) typed.push({ type, answer });
  }

  // 5. Timing samples with what is left: each operation in turn, histories across numbers.
  const withHistory = numbers.slice(0, Math.max(1, looked));
  for (let i = 0; caller.made < caller.maxCalls && numbers.length > 0; i += 1) {
    const kind = i % 3;
    const sample =
      kind === 0
        ? await history(
            withHistory[i % withHistory.length] as Json,
            0,
            SAMPLE_END,
            `history 0..${SAMPLE_END} (timing)`,
          )
        : await optional(() =>
            kind === 1
              ? caller.call('allownednumbers', 'all owned numbers (timing)', {})
              : caller.call('ownednumbers', 'owned numbers, local (timing)', {
                  number_type: 'local',
                }),
          );
    if (!sample) break;
  }

  return {
    owned,
    numbers,
    typed,
    histories,
    end,
    endSearch: { looked, mostMessages },
    pastTotal,
    beyondTotal,
    reversed,
    wrongCredentials,
    missingParameter,
    answers: caller.answers,
    callsMade: caller.made,
    maxCalls: caller.maxCalls,
  };
}

/** The numbers of a successful allownednumbers answer; CouldNotAsk with the reason otherwise. */
function ownedNumbersOf(answer: Answer): Json[] {
  const why = cannotAsk(answer);
  if (why) throw new CouldNotAsk(why);
  const data = (answer.json as Json).data;
  return Array.isArray(data)
    ? data.filter((n): n is Json => typeof n === 'object' && n !== null && !Array.isArray(n))
    : [];
}

/** Why the account's first call tells nothing, or null when it was answered. */
export function cannotAsk(answer: Answer): string | null {
  if (answer.status === null) return `could not reach UPSTREAM_URL: ${answer.failure}`;
  if (answer.status === 401 || answer.status === 403)
    return `the service refused SMS_SYS_ID / SMS_AUTH_TOKEN (HTTP ${answer.status})`;
  if (answer.status === 429) {
    const after = answer.limitHeaders['retry-after'];
    return `the service is rate limiting this account (HTTP 429${after ? `, Retry-After ${after}` : ''}); try again later`;
  }
  const json = answer.json;
  if (json === undefined) {
    return `the service's answer is not JSON (HTTP ${answer.status}, ${answer.contentType ?? 'no content type'}): is UPSTREAM_URL the service's base URL?`;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return `the service's answer is not a JSON object (HTTP ${answer.status})`;
  const object = json as Json;
  if (object.success !== '1') {
    if (refusesCredentials(object.error))
      return `the service refused SMS_SYS_ID / SMS_AUTH_TOKEN (HTTP ${answer.status}, success "${String(object.success)}")`;
    return `the service answered allownednumbers with a failure (HTTP ${answer.status}, success ${JSON.stringify(object.success) ?? 'absent'})`;
  }
  if (answer.status < 200 || answer.status >= 300)
    return `the service answered allownednumbers with HTTP ${answer.status}`;
  return null;
}

/** The answer's JSON object when it reports success, else null. */
export function successful(answer: Answer): Json | null {
  const json = answer.json;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  return (json as Json).success === '1' ? (json as Json) : null;
}

export function messagesOf(answer: Answer): Json[] | null {
  const messages = successful(answer)?.messages;
  if (!Array.isArray(messages)) return null;
  return messages.filter((m): m is Json => typeof m === 'object' && m !== null);
}

function idsOf(answer: Answer): string[] | null {
  return messagesOf(answer)?.map((m) => String(m.message_id ?? '')) ?? null;
}

function totalOf(answer: Answer): number | null {
  const raw = successful(answer)?.total_message_count;
  const total = typeof raw === 'string' ? Number(raw.trim()) : raw;
  return typeof total === 'number' && Number.isSafeInteger(total) ? total : null;
}

/**
 * What the doctor asks the service (reads only), most important first so a small budget still
 * tells how `history_end` is read. findings.ts judges.
 */
import { BudgetSpent, type Answer, type Caller } from './caller.js';
import { isObject, refusesCredentials } from '../upstream/wire.js';

export type Json = Record<string, unknown>;

/** The service could not be asked at all: the reason is shown and the doctor exits 2. */
export class CouldNotAsk extends Error {
  override readonly name = 'CouldNotAsk';
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

/** A probe's answer is null when it was not made (the budget, or nothing to ask about). */
export type Observations = Awaited<ReturnType<typeof runProbes>>;

/** An obviously invented pair: it owes nothing to the real one, so showing it would reveal nothing. */
const INVENTED_PAIR = {
  sys_id: 'doctor-invented-sys-id-0000',
  auth_token: 'doctor-invented-token-0000',
} as const;

/** Numbers looked at for one with three messages, before giving up on `history.end`. */
const NUMBERS_SEARCHED = 5;
/** The width of the reference read and of each timing sample's history read. */
const REFERENCE_END = 5;
const SAMPLE_END = 20;

export async function runProbes(caller: Caller) {
  const owned = await caller.call('allownednumbers', 'all owned numbers', {});
  const why = cannotAsk(owned);
  if (why) throw new CouldNotAsk(why);
  const numbers = objectsIn((owned.json as Json).data);
  const histories: Answer[] = [];

  /** A call, or null when the budget is spent. */
  const optional = (...call: Parameters<Caller['call']>): Promise<Answer | null> =>
    caller.call(...call).catch((error: unknown) => {
      if (error instanceof BudgetSpent) return null;
      throw error;
    });
  /** One history read (without history_end when `end` is null). */
  async function history(
    number: Json,
    start: number,
    end: number | null,
    label = `history ${start}..${end ?? '(none)'}`,
  ): Promise<Answer | null> {
    const params: Record<string, string> = {
      number: String(number.number ?? ''),
      tid: String(number.tid ?? ''),
      history_start: String(start),
    };
    if (end !== null) params.history_end = String(end);
    const answer = await optional('smshistory', label, params);
    if (answer && end !== null) histories.push(answer);
    return answer;
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
    const total = totalOf(reference);
    const ids = idsOf(reference);
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
      zeroToOne: zeroToOne && idsOf(zeroToOne),
      oneToTwo: oneToTwo && idsOf(oneToTwo),
    };
    break;
  }

  // 2. Ranges at and past the end, and a reversed one, on the same number.
  const total = chosen?.total ?? 0;
  const onChosen = (start: number, end: number, note = `total ${total}`) =>
    chosen ? history(chosen.number, start, end, `history ${start}..${end} (${note})`) : null;
  const pastTotal = await onChosen(total - 1, total + 4);
  const beyondTotal = await onChosen(total + 10, total + 15);
  const reversed = await onChosen(2, 1, 'reversed');

  // 3. Errors: an invented pair, and a call without history_end.
  const wrongCredentials = await optional('allownednumbers', 'invented credentials', INVENTED_PAIR);
  const first = numbers[0];
  const missingParameter = first
    ? await history(first, 0, null, 'history without history_end')
    : null;

  // 4. The typed lists.
  const typed: { type: string; answer: Answer }[] = [];
  for (const type of ['local', 'tollfree']) {
    const answer = await optional('ownednumbers', `owned numbers, ${type}`, { number_type: type });
    if (answer) typed.push({ type, answer });
  }

  // 5. Timing samples with what is left: each operation in turn, histories across numbers.
  const withHistory = numbers.slice(0, Math.max(1, looked));
  for (let i = 0; caller.made < caller.maxCalls && numbers.length > 0; i += 1) {
    const number = withHistory[i % withHistory.length] as Json;
    const sample = await [
      () => history(number, 0, SAMPLE_END, `history 0..${SAMPLE_END} (timing)`),
      () => optional('allownednumbers', 'all owned numbers (timing)', {}),
      () => optional('ownednumbers', 'owned numbers, local (timing)', { number_type: 'local' }),
    ][i % 3]!();
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
  if (json === undefined)
    return `the service's answer is not JSON (HTTP ${answer.status}, ${answer.contentType ?? 'no content type'}): is UPSTREAM_URL the service's base URL?`;
  if (!isObject(json)) return `the service's answer is not a JSON object (HTTP ${answer.status})`;
  if (json.success !== '1') {
    if (refusesCredentials(json.error))
      return `the service refused SMS_SYS_ID / SMS_AUTH_TOKEN (HTTP ${answer.status}, success "${String(json.success)}")`;
    return `the service answered allownednumbers with a failure (HTTP ${answer.status}, success ${JSON.stringify(json.success) ?? 'absent'})`;
  }
  if (answer.status < 200 || answer.status >= 300)
    return `the service answered allownednumbers with HTTP ${answer.status}`;
  return null;
}

export function objectsIn(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

export function successful(answer: Answer): Json | null {
  return isObject(answer.json) && answer.json.success === '1' ? answer.json : null;
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

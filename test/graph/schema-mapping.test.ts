/** End to end through a real simulator on loopback: every mapping of the schema contract. */
import { describe, expect, it } from 'vitest';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  type DemoMessage,
  type DemoNumber,
} from '../../src/simulator/index.js';
import { basicAuth, execute, sharedStack } from '../fixtures/harness.js';
import { NumberWithHistoryQuery } from '../fixtures/operations.js';

const stack = sharedStack();

const auth = basicAuth(DEMO_CREDENTIALS);
const iso = (upstream: string) => `${upstream.replace(' ', 'T')}.000Z`;
const numberWhere = (predicate: (n: DemoNumber) => boolean): DemoNumber => {
  const found = DEMO_ACCOUNT.numbers.find(predicate);
  if (!found) throw new Error('demo data lacks the number this test needs');
  return found;
};

function expectedMessage(m: DemoMessage) {
  const [code, ...text] = m.status.split(' ');
  return {
    id: m.message_id,
    systemId: String(m.system_id),
    sentAt: iso(m.GMTdate),
    tid: m.tid,
    phone: m.phone,
    direction: m.direction.toUpperCase(),
    body: m.body,
    mms: m.mms === 'yes',
    mediaUrl: m.mms_url === '' ? null : m.mms_url,
    status: { code: Number(code), text: text.join(' '), ok: code === '200', raw: m.status },
  };
}

/** The page `start`..`end` of `tid`'s history, read through the gateway with the demo account. */
const readHistory = (tid: string, start: number, end: number) =>
  execute(stack.gateway, NumberWithHistoryQuery, { tid, start, end }, auth);

describe('number(tid) with history', () => {
  it('maps every field of a history page', async () => {
    const target = numberWhere(
      (n) => !n.looselyTyped && n.messages.some((m) => m.mms === 'yes') && n.messages.length > 20,
    );
    const { body } = await readHistory(target.tid, 0, 20);
    expect(body.errors).toBeUndefined();
    const history = body.data?.number?.history;
    expect(history).toEqual({
      tid: target.tid,
      number: target.number,
      requestedCount: 20,
      totalCount: target.messages.length,
      createdAt: iso(target.createdDate),
      mostRecentMessageId: String(target.messages[0]?.system_id),
      mostRecentAt: iso(target.messages[0]?.GMTdate ?? ''),
      optIn: target.optin === 'yes',
      messages: target.messages.slice(0, 20).map(expectedMessage),
    });
  });

  it('covers MMS media, failed statuses and both directions somewhere in the demo data', async () => {
    const target = numberWhere((n) => n.messages.length >= 400);
    const { body } = await readHistory(target.tid, 0, 450);
    const messages = body.data?.number?.history?.messages ?? [];
    expect(messages).toHaveLength(Math.min(450, target.messages.length));
    expect(messages.some((m) => m?.mms && m.mediaUrl !== null)).toBe(true);
    expect(messages.some((m) => m && !m.status.ok && m.status.code === 400)).toBe(true);
    expect(new Set(messages.map((m) => m?.direction))).toEqual(new Set(['OUTBOUND', 'INBOUND']));
  });

  it('reads a history whose integers arrive as numeric strings', async () => {
    const target = numberWhere((n) => n.looselyTyped);
    const { body } = await readHistory(target.tid, 0, 3);
    expect(body.errors).toBeUndefined();
    expect(body.data?.number?.history).toMatchObject({
      requestedCount: 3,
      totalCount: target.messages.length,
      messages: target.messages.slice(0, 3).map(expectedMessage),
    });
  });

  it('returns an empty page for a number with no messages', async () => {
    const target = numberWhere((n) => n.messages.length === 0);
    const { body } = await readHistory(target.tid, 0, 10);
    expect(body.errors).toBeUndefined();
    expect(body.data?.number?.history).toMatchObject({
      totalCount: 0,
      mostRecentMessageId: null,
      messages: [],
    });
  });

  it('passes the range through: past the end returns what the upstream returns', async () => {
    const target = numberWhere((n) => n.messages.length > 0 && n.messages.length < 200);
    const total = target.messages.length;
    const { body } = await readHistory(target.tid, total - 2, total + 8);
    expect(body.data?.number?.history?.requestedCount).toBe(10);
    expect(body.data?.number?.history?.messages.map((m) => m?.id)).toEqual(
      target.messages.slice(total - 2).map((m) => m.message_id),
    );
  });

  it('is null, without an error, for a tid the account does not own', async () => {
    const { body } = await readHistory('TN-NOPE', 0, 1);
    expect(body).toEqual({ data: { number: null } });
  });
});

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isUnreadable, type Message, type MessageRecord } from '../../src/core/domain.js';
import { ErrorCode, UpstreamError } from '../../src/core/errors.js';
import {
  parseDirection,
  parseHistory,
  parseNumberType,
  parseOwnedNumbers,
  parseStatus,
  parseTimestamp,
} from '../../src/upstream/wire.js';

const request = { tid: 'TN-1', number: '15125550101', start: 0, end: 2 };

function message(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    system_id: 9001,
    message_id: '0123456789abcdef0123456789abcdef',
    GMTdate: '2026-03-04 05:06:07',
    tid: 'TN-1',
    phone: '15551230123',
    direction: 'outbound',
    body: 'Hello',
    mms: 'no',
    mms_url: '',
    status: '200 Message delivered',
    ...overrides,
  };
}

function history(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    success: '1',
    'message_count_requested ': 2,
    total_message_count: 40,
    created_date: '2025-12-01 10:00:00',
    most_recent_msg_id: 77,
    most_recent_date: '2026-03-04 05:06:07',
    tid: 'TN-1',
    number: '15125550101',
    optin: 'yes',
    messages: [message()],
    ...overrides,
  };
}

/** A history answer with these fields changed, read for `request`. */
const readHistory = (overrides: Record<string, unknown> = {}) =>
  parseHistory(history(overrides), request);

function readable(record: MessageRecord | undefined): Message {
  if (!record || isUnreadable(record)) throw new Error('expected a readable message');
  return record;
}

/** The error an unreadable record carries in its place. */
function recordFailure(record: MessageRecord | undefined): UpstreamError {
  if (!record || !isUnreadable(record)) throw new Error('expected an unreadable record');
  expect(record.error).toBeInstanceOf(UpstreamError);
  return record.error as UpstreamError;
}

function upstreamFailure(run: () => unknown): UpstreamError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected an UpstreamError');
}

describe('history key with a trailing space', () => {
  it('reads message_count_requested from the key that ends in a space', () => {
    expect(readHistory().requestedCount).toBe(2);
  });
  it('also reads the unspaced key, should the service fix it', () => {
    const { 'message_count_requested ': count, ...rest } = history();
    expect(parseHistory({ ...rest, message_count_requested: count }, request).requestedCount).toBe(
      2,
    );
  });
  it('fails with UPSTREAM_ERROR when neither spelling is present', () => {
    const { 'message_count_requested ': _count, ...rest } = history();
    const error = upstreamFailure(() => parseHistory(rest, request));
    expect(error.code).toBe(ErrorCode.UpstreamError);
    expect(error.message).toContain('message_count_requested');
  });
});

describe('success flag', () => {
  it.each([['0'], [1], [true], [''], [undefined], ['yes']])('refuses success=%j', (success) => {
    const error = upstreamFailure(() => parseOwnedNumbers('ownednumbers', { success, data: [] }));
    expect(error.code).toBe(ErrorCode.UpstreamError);
    expect(error.message).toMatch(/reported a failure for ownednumbers/);
  });
  it('refuses a body that is not a JSON object', () => {
    for (const body of [null, [], 'ok', 42]) {
      expect(upstreamFailure(() => parseOwnedNumbers('allownednumbers', body)).code).toBe(
        ErrorCode.UpstreamError,
      );
    }
  });
  it('does not echo the failure body the service sent', () => {
    const error = upstreamFailure(() =>
      parseHistory({ success: '0', error: 'secret-ish detail' }, request),
    );
    expect(error.message).not.toContain('secret-ish');
  });
});

describe('loosely typed integers', () => {
  it('accepts integers sent as numeric strings', () => {
    const parsed = readHistory({
      'message_count_requested ': '2',
      total_message_count: ' 40 ',
      most_recent_msg_id: '77',
      messages: [message({ system_id: '9001' })],
    });
    expect(parsed).toMatchObject({ requestedCount: 2, totalCount: 40, mostRecentMessageId: '77' });
    expect(readable(parsed.messages[0]).systemId).toBe('9001');
  });
  it('accepts identifiers and phone numbers sent as integers', () => {
    const parsed = parseOwnedNumbers('ownednumbers', {
      success: '1',
      data: [{ number: 15125550101, tid: 42, type: 'local', webhook: '' }],
    });
    expect(parsed[0]).toEqual({ number: '15125550101', tid: '42', type: 'LOCAL', webhook: null });
  });
  it.each([['forty'], [4.5], [{}], [null], ['1e3'], [Number.MAX_SAFE_INTEGER + 2]])(
    'refuses total_message_count=%j, naming the field',
    (value) => {
      const error = upstreamFailure(() => readHistory({ total_message_count: value }));
      expect(error.code).toBe(ErrorCode.UpstreamError);
      expect(error.message).toContain('total_message_count');
    },
  );
  it('fails only the bad record, naming its index and field', () => {
    const parsed = readHistory({ messages: [message(), message({ system_id: 'x' }), message()] });
    expect(parsed.totalCount).toBe(40);
    expect(readable(parsed.messages[0]).systemId).toBe('9001');
    expect(readable(parsed.messages[2]).systemId).toBe('9001');
    const error = recordFailure(parsed.messages[1]);
    expect(error.code).toBe(ErrorCode.UpstreamError);
    expect(error.message).toContain('messages[1].system_id');
    // Its id was readable: paging and live updates can still recognise it.
    expect(parsed.messages[1]?.id).toBe('0123456789abcdef0123456789abcdef');
  });
});

describe('timestamps', () => {
  it('reads YYYY-MM-DD HH:MM:SS as UTC', () => {
    expect(parseTimestamp('2026-03-04 05:06:07')?.toISOString()).toBe('2026-03-04T05:06:07.000Z');
  });
  it.each([
    ['2026-02-30 00:00:00'],
    ['2026-13-01 00:00:00'],
    ['2026-01-01 24:00:00'],
    ['yesterday'],
    ['2026-01-01'],
    ['2026-01-01 00:00:0x'],
    ['2026-01-01+00:00:00'],
    ['2026/01/01 00:00:00'],
  ])('refuses %s', (text) => expect(parseTimestamp(text)).toBeNull());
  it('reads a T separator and surrounding spaces too', () => {
    expect(parseTimestamp('2026-03-04T05:06:07')?.toISOString()).toBe('2026-03-04T05:06:07.000Z');
    expect(parseTimestamp(' 2026-03-04 05:06:07 ')?.toISOString()).toBe('2026-03-04T05:06:07.000Z');
  });
  it('agrees with Date.UTC on any real date and time, and refuses any other digits', () => {
    const two = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 9999 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        (year, month, day, hour, minute, second) => {
          const text = `${year}-${two(month)}-${two(day)} ${two(hour)}:${two(minute)}:${two(second)}`;
          const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
          const real = date.toISOString().slice(0, 19).replace('T', ' ') === text;
          expect(parseTimestamp(text)?.getTime() ?? null).toBe(real ? date.getTime() : null);
        },
      ),
    );
  });
  it('maps empty and all-zero optional dates to null, but a bad message date fails that message', () => {
    const parsed = readHistory({ created_date: '', most_recent_date: '0000-00-00 00:00:00' });
    expect(parsed.createdAt).toBeNull();
    expect(parsed.mostRecentAt).toBeNull();
    const bad = readHistory({ messages: [message({ GMTdate: 'soon' })] });
    expect(recordFailure(bad.messages[0]).message).toContain('messages[0].GMTdate');
  });
});

describe('mms and empty strings', () => {
  it('maps mms yes/no and empty mms_url to null', () => {
    const parsed = readHistory({
      messages: [
        message({ mms: 'yes', mms_url: 'https://media.example.com/a.jpg' }),
        message({ mms: 'no', mms_url: '' }),
      ],
    });
    expect(parsed.messages.map(readable).map((m) => [m.mms, m.mediaUrl])).toEqual([
      [true, 'https://media.example.com/a.jpg'],
      [false, null],
    ]);
  });
  it('infers mms from the media URL when the flag is unreadable', () => {
    const parsed = readHistory({
      messages: [message({ mms: 'maybe', mms_url: 'https://m.example.com/b.png' })],
    });
    expect(readable(parsed.messages[0]).mms).toBe(true);
  });
  it('maps an empty webhook to null and keeps a set one', () => {
    const parsed = parseOwnedNumbers('allownednumbers', {
      success: '1',
      data: [
        { number: '1', tid: 'a', type: 'local', webhook: '' },
        { number: '2', tid: 'b', type: 'tollfree', webhook: 'https://hooks.example.com/x' },
      ],
    });
    expect(parsed.map((n) => n.webhook)).toEqual([null, 'https://hooks.example.com/x']);
  });
  it('reads optin yes/no and leaves unknown values null', () => {
    expect(readHistory({ optin: 'yes' }).optIn).toBe(true);
    expect(readHistory({ optin: 'no' }).optIn).toBe(false);
    expect(readHistory({ optin: 'pending' }).optIn).toBeNull();
  });
});

describe('status', () => {
  it.each([
    ['200 Message delivered', { code: 200, text: 'Message delivered', ok: true }],
    [
      '400 Undeliverable: carrier rejected',
      { code: 400, text: 'Undeliverable: carrier rejected', ok: false },
    ],
    ['202', { code: 202, text: '', ok: true }],
    ['503 - try later', { code: 503, text: 'try later', ok: false }],
    ['queued', { code: null, text: 'queued', ok: false }],
    ['', { code: null, text: '', ok: false }],
  ])('parses %j', (raw, expected) => {
    expect(parseStatus(raw)).toEqual({ ...expected, raw });
  });
  it('reads a repeated status once and shares it, frozen; many distinct ones still read right', () => {
    const first = parseStatus('200 Message delivered');
    expect(parseStatus('200 Message delivered')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    for (let i = 0; i < 1_000; i += 1) {
      expect(parseStatus(`400 rejected id ${i}`)).toMatchObject({
        code: 400,
        text: `rejected id ${i}`,
      });
    }
    expect(parseStatus('200 Message delivered')).toEqual(first);
  });
});

describe('enum-like values beyond the documented ones', () => {
  it('maps unseen number types to UNKNOWN without failing the list', () => {
    expect(['local', 'TOLLFREE', 'toll-free', 'shortcode', ''].map(parseNumberType)).toEqual([
      'LOCAL',
      'TOLLFREE',
      'TOLLFREE',
      'UNKNOWN',
      'UNKNOWN',
    ]);
  });
  it('maps unseen directions to UNKNOWN without failing the page', () => {
    expect(['outbound', 'Inbound', 'sideways'].map(parseDirection)).toEqual([
      'OUTBOUND',
      'INBOUND',
      'UNKNOWN',
    ]);
    const parsed = readHistory({ messages: [message({ direction: 'sideways' })] });
    expect(readable(parsed.messages[0]).direction).toBe('UNKNOWN');
  });
});

describe('missing pieces', () => {
  it('falls back to the request for tid and number, and treats missing messages as none', () => {
    const { tid: _tid, number: _number, messages: _messages, ...rest } = history();
    const parsed = parseHistory(rest, request);
    expect(parsed).toMatchObject({ tid: 'TN-1', number: '15125550101', messages: [] });
  });
  it('reads most_recent_msg_id 0 as no newest message', () => {
    expect(readHistory({ most_recent_msg_id: 0, messages: [] }).mostRecentMessageId).toBeNull();
  });
  it('refuses messages that are not an array; a record that is not an object fails alone', () => {
    expect(upstreamFailure(() => readHistory({ messages: 'none' })).message).toContain(
      '`messages`',
    );
    const parsed = readHistory({ messages: [7, message(), null] });
    expect(recordFailure(parsed.messages[0]).message).toContain(
      '`messages[0]` should be an object',
    );
    expect(readable(parsed.messages[1]).body).toBe('Hello');
    expect(recordFailure(parsed.messages[2]).message).toContain('messages[2]');
    expect(parsed.messages.map((m) => m.id)).toEqual([
      null,
      '0123456789abcdef0123456789abcdef',
      null,
    ]);
    expect(
      upstreamFailure(() => parseOwnedNumbers('ownednumbers', { success: '1', data: {} })).message,
    ).toContain('`data`');
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WIRE_FIELDS } from '../../src/upstream/wire.js';
import { untilAsync } from '../../support/wait.js';

import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  DEMO_HISTORY_ENDS_AT,
  SECOND_DEMO_ACCOUNT,
  SECOND_DEMO_CREDENTIALS,
  startSimulator,
} from '../../src/simulator/index.js';
import type {
  AnsweredRequest,
  RunningSimulator,
  SimulatorCredentials,
} from '../../src/simulator/index.js';

type Json = Record<string, unknown>;

interface Reply {
  status: number;
  contentType: string | undefined;
  text: string;
  json: Json;
}

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator();
});

afterAll(async () => {
  await sim.close();
});

function creds(c: SimulatorCredentials = DEMO_CREDENTIALS): Record<string, string> {
  return { sys_id: c.sysId, auth_token: c.authToken };
}

async function call(
  path: string,
  params: Record<string, string>,
  options: { query?: Record<string, string>; method?: 'POST' | 'GET'; base?: string } = {},
): Promise<Reply> {
  const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  const method = options.method ?? 'POST';
  const res = await request(`${options.base ?? sim.url}${path}${query}`, {
    method,
    ...(method === 'POST'
      ? {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(params).toString(),
        }
      : {}),
  });
  const text = await res.body.text();
  const header = res.headers['content-type'];
  return {
    status: res.statusCode,
    contentType: typeof header === 'string' ? header : undefined,
    text,
    json: JSON.parse(text) as Json,
  };
}

function history(
  tid: string,
  number: string,
  start: number | string,
  end: number | string,
  c: SimulatorCredentials = DEMO_CREDENTIALS,
  base?: string,
): Promise<Reply> {
  return call(
    '/api/smshistory',
    {
      ...creds(c),
      tid,
      number,
      history_start: String(start),
      history_end: String(end),
    },
    base === undefined ? {} : { base },
  );
}

function demoNumber(tid: string): (typeof DEMO_ACCOUNT.numbers)[number] {
  const found = DEMO_ACCOUNT.numbers.find((n) => n.tid === tid);
  if (!found) throw new Error(`no demo number ${tid}`);
  return found;
}

const BIG = demoNumber('TN-L-0001'); // 450 messages
const LOOSE = demoNumber('TN-L-0002'); // loosely typed
const EMPTY = demoNumber('TN-L-0003'); // 0 messages
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

function messagesOf(reply: Reply): Json[] {
  const messages = reply.json['messages'];
  expect(Array.isArray(messages)).toBe(true);
  return messages as Json[];
}

describe('demo data', () => {
  it('has the shape the brief asks for', () => {
    const local = DEMO_ACCOUNT.numbers.filter((n) => n.type === 'local');
    const tollfree = DEMO_ACCOUNT.numbers.filter((n) => n.type === 'tollfree');
    expect(local.length).toBeGreaterThanOrEqual(4);
    expect(tollfree.length).toBeGreaterThanOrEqual(3);
    const counts = DEMO_ACCOUNT.numbers.map((n) => n.messages.length);
    expect(counts).toContain(0);
    expect(counts).toContain(450);
    expect(DEMO_ACCOUNT.numbers.filter((n) => n.looselyTyped)).toHaveLength(1);
    expect(DEMO_ACCOUNT.numbers.filter((n) => n.optin === 'no')).toHaveLength(1);
    expect(DEMO_ACCOUNT.numbers.some((n) => n.webhook === '')).toBe(true);
    expect(DEMO_ACCOUNT.numbers.some((n) => n.webhook.startsWith('https://'))).toBe(true);
    const messages = DEMO_ACCOUNT.numbers.flatMap((n) => n.messages);
    const outbound = messages.filter((m) => m.direction === 'outbound').length;
    const inbound = messages.filter((m) => m.direction === 'inbound').length;
    expect(inbound).toBeGreaterThan(0);
    expect(outbound).toBeGreaterThan(inbound);
    expect(messages.some((m) => m.mms === 'yes')).toBe(true);
    expect(messages.some((m) => m.mms === 'no')).toBe(true);
    expect(messages.some((m) => m.status.startsWith('400 '))).toBe(true);
    expect(messages.some((m) => m.status.startsWith('200 '))).toBe(true);
    const secondTids = new Set(SECOND_DEMO_ACCOUNT.numbers.map((n) => n.tid));
    const secondNumbers = new Set(SECOND_DEMO_ACCOUNT.numbers.map((n) => n.number));
    for (const n of DEMO_ACCOUNT.numbers) {
      expect(secondTids.has(n.tid)).toBe(false);
      expect(secondNumbers.has(n.number)).toBe(false);
    }
  });

  it('has unique 32-hex message ids and strictly decreasing timestamps', () => {
    const ids = new Set<string>();
    for (const account of [DEMO_ACCOUNT, SECOND_DEMO_ACCOUNT]) {
      for (const n of account.numbers) {
        let previous: string | null = null;
        for (const m of n.messages) {
          expect(m.message_id).toMatch(/^[0-9a-f]{32}$/);
          expect(ids.has(m.message_id)).toBe(false);
          ids.add(m.message_id);
          expect(m.GMTdate).toMatch(TIMESTAMP);
          if (previous !== null) expect(m.GMTdate < previous).toBe(true);
          previous = m.GMTdate;
          expect(m.mms_url === '').toBe(m.mms === 'no');
        }
      }
    }
  });
});

describe('the demo history', () => {
  it('ends when the simulator starts: no message is dated in the future', () => {
    const now = Date.now();
    const newest = [DEMO_ACCOUNT, SECOND_DEMO_ACCOUNT]
      .flatMap((account) => account.numbers)
      .map((n) => n.messages[0]?.GMTdate)
      .filter((date): date is string => date !== undefined)
      .map((date) => Date.parse(`${date.replace(' ', 'T')}Z`));
    expect(Math.max(...newest)).toBeLessThanOrEqual(now);
    // The newest of all is the start itself, to the second (not a date long past either).
    expect(Math.max(...newest)).toBe(DEMO_HISTORY_ENDS_AT * 1000);
    expect(now - DEMO_HISTORY_ENDS_AT * 1000).toBeLessThan(10 * 60_000);
    for (const n of DEMO_ACCOUNT.numbers) {
      expect(Date.parse(`${n.createdDate.replace(' ', 'T')}Z`)).toBeLessThanOrEqual(now);
    }
  });
});

describe('smshistory', () => {
  it('returns the exact key set, including the trailing-space key, and success "1"', async () => {
    const reply = await history(BIG.tid, BIG.number, 0, 10);
    expect(reply.status).toBe(200);
    expect(reply.contentType).toBe('application/json');
    // Every documented field in its order, the count with its trailing space only.
    expect(Object.keys(reply.json)).toEqual(
      WIRE_FIELDS.history.filter((key) => key !== 'message_count_requested'),
    );
    expect(reply.json['success']).toBe('1');
    expect(reply.json['message_count_requested ']).toBe(10);
    expect(reply.json).not.toHaveProperty('message_count_requested');
    expect(reply.json['total_message_count']).toBe(450);
    expect(reply.json['tid']).toBe(BIG.tid);
    expect(reply.json['number']).toBe(BIG.number);
    expect(reply.json['optin']).toBe('yes');
    expect(reply.json['created_date']).toMatch(TIMESTAMP);
    expect(reply.json['most_recent_date']).toBe(BIG.messages[0]?.GMTdate);
    expect(reply.json['most_recent_msg_id']).toBe(BIG.messages[0]?.system_id);
    const first = messagesOf(reply)[0];
    // Every field the gateway's reader knows, in the service's order (src/upstream/wire.ts).
    expect(Object.keys(first ?? {})).toEqual(WIRE_FIELDS.message);
    expect(typeof first?.['system_id']).toBe('number');
  });

  it('slices with start inclusive, end exclusive, newest first', async () => {
    const reply = await history(BIG.tid, BIG.number, 5, 12);
    const messages = messagesOf(reply);
    expect(reply.json['message_count_requested ']).toBe(7);
    expect(messages.map((m) => m['message_id'])).toEqual(
      BIG.messages.slice(5, 12).map((m) => m.message_id),
    );
    const dates = messages.map((m) => String(m['GMTdate']));
    expect([...dates].sort().reverse()).toEqual(dates);
    // Position 0 is the newest message of the number.
    const head = messagesOf(await history(BIG.tid, BIG.number, 0, 1));
    expect(head).toHaveLength(1);
    expect(head[0]?.['GMTdate']).toBe(reply.json['most_recent_date']);
  });

  it("serves every number's messages byte-exactly for assorted ranges", async () => {
    for (const account of [DEMO_ACCOUNT, SECOND_DEMO_ACCOUNT]) {
      const c = account === DEMO_ACCOUNT ? DEMO_CREDENTIALS : SECOND_DEMO_CREDENTIALS;
      for (const n of account.numbers) {
        const total = n.messages.length;
        for (const [start, end] of [
          [0, total],
          [0, 1],
          [1, 4],
          [Math.floor(total / 2), total + 3],
          [total - 1, total],
        ] as const) {
          if (start < 0 || end < start) continue;
          const reply = await history(n.tid, n.number, start, end, c);
          expect(reply.status).toBe(200);
          expect(messagesOf(reply)).toEqual(n.messages.slice(start, end));
        }
      }
    }
  });

  it('returns what exists when the range reaches past the end, and [] beyond it', async () => {
    const tail = await history(BIG.tid, BIG.number, 445, 460);
    expect(tail.json['message_count_requested ']).toBe(15);
    expect(messagesOf(tail).map((m) => m['message_id'])).toEqual(
      BIG.messages.slice(445).map((m) => m.message_id),
    );
    expect(messagesOf(tail)).toHaveLength(5);
    const beyond = await history(BIG.tid, BIG.number, 500, 510);
    expect(beyond.status).toBe(200);
    expect(beyond.json['success']).toBe('1');
    expect(beyond.json['total_message_count']).toBe(450);
    expect(messagesOf(beyond)).toEqual([]);
  });

  it('handles a number with zero messages', async () => {
    const reply = await history(EMPTY.tid, EMPTY.number, 0, 20);
    expect(reply.json['success']).toBe('1');
    expect(reply.json['total_message_count']).toBe(0);
    expect(reply.json['most_recent_msg_id']).toBe(0);
    expect(reply.json['created_date']).toBe(EMPTY.createdDate);
    expect(reply.json['most_recent_date']).toMatch(TIMESTAMP);
    expect(messagesOf(reply)).toEqual([]);
  });

  it('sends the loosely typed number with numeric strings, other numbers with integers', async () => {
    const loose = await history(LOOSE.tid, LOOSE.number, 0, 5);
    expect(loose.json['message_count_requested ']).toBe('5');
    expect(loose.json['total_message_count']).toBe(String(LOOSE.messages.length));
    expect(loose.json['most_recent_msg_id']).toMatch(/^\d+$/);
    for (const m of messagesOf(loose)) expect(m['system_id']).toMatch(/^\d+$/);

    const strict = await history(demoNumber('TN-T-0001').tid, '18885550111', 0, 5);
    expect(strict.json['message_count_requested ']).toBe(5);
    expect(typeof strict.json['total_message_count']).toBe('number');
    expect(typeof strict.json['most_recent_msg_id']).toBe('number');
    for (const m of messagesOf(strict)) expect(typeof m['system_id']).toBe('number');
  });

  it('answers "number not found" (HTTP 200) for a foreign tid or mismatched number', async () => {
    const mismatched = await history(BIG.tid, LOOSE.number, 0, 5);
    expect(mismatched.status).toBe(200);
    expect(mismatched.json).toEqual({ success: '0', error: 'number not found' });

    // A tid that belongs to the other account is invisible.
    const other = SECOND_DEMO_ACCOUNT.numbers[0];
    const foreign = await history(other?.tid ?? '', other?.number ?? '', 0, 5);
    expect(foreign.status).toBe(200);
    expect(foreign.json).toEqual({ success: '0', error: 'number not found' });

    // ...but the second account sees its own number, with its own data.
    const own = await history(other?.tid ?? '', other?.number ?? '', 0, 5, SECOND_DEMO_CREDENTIALS);
    expect(own.json['success']).toBe('1');
    expect(own.json['total_message_count']).toBe(other?.messages.length);
  });

  it('rejects a reversed range and non-integer bounds with 400', async () => {
    const reversed = await history(BIG.tid, BIG.number, 10, 5);
    expect(reversed.status).toBe(400);
    expect(reversed.json['success']).toBe('0');
    expect(String(reversed.json['error'])).toMatch(/history_end/);

    for (const bad of ['-1', '1.5', 'abc', '']) {
      const reply = await history(BIG.tid, BIG.number, bad, 5);
      expect(reply.status).toBe(400);
      expect(String(reply.json['error'])).toMatch(/history_start/);
    }
    const missingTid = await call('/api/smshistory', {
      ...creds(),
      number: BIG.number,
      history_start: '0',
      history_end: '5',
    });
    expect(missingTid.status).toBe(400);
    expect(String(missingTid.json['error'])).toMatch(/tid/);
  });
});

describe('smshistory reading history_end inclusively (historyEnd: inclusive)', () => {
  let inclusive: RunningSimulator;
  beforeAll(async () => {
    inclusive = await startSimulator({ historyEnd: 'inclusive' });
  });
  afterAll(() => inclusive.close());

  it('serves [start, end], counting end - start + 1, with ends past the total and equal bounds', async () => {
    const range = await history(BIG.tid, BIG.number, 5, 12, DEMO_CREDENTIALS, inclusive.url);
    expect(range.json['message_count_requested ']).toBe(8);
    expect(messagesOf(range)).toEqual(BIG.messages.slice(5, 13));
    const one = await history(BIG.tid, BIG.number, 3, 3, DEMO_CREDENTIALS, inclusive.url);
    expect(messagesOf(one)).toEqual(BIG.messages.slice(3, 4));
    const tail = await history(BIG.tid, BIG.number, 445, 460, DEMO_CREDENTIALS, inclusive.url);
    expect(messagesOf(tail)).toEqual(BIG.messages.slice(445));
    const beyond = await history(BIG.tid, BIG.number, 500, 510, DEMO_CREDENTIALS, inclusive.url);
    expect(messagesOf(beyond)).toEqual([]);
    const reversed = await history(BIG.tid, BIG.number, 10, 5, DEMO_CREDENTIALS, inclusive.url);
    expect(reversed.status).toBe(400);
  });
});

describe('ownednumbers / allownednumbers', () => {
  it('filters ownednumbers by type', async () => {
    for (const type of ['local', 'tollfree'] as const) {
      const reply = await call('/api/ownednumbers', { ...creds(), number_type: type });
      expect(reply.status).toBe(200);
      expect(reply.contentType).toBe('application/json');
      expect(reply.json['success']).toBe('1');
      const data = reply.json['data'] as Json[];
      const expected = DEMO_ACCOUNT.numbers.filter((n) => n.type === type);
      expect(data).toEqual(
        expected.map((n) => ({ number: n.number, tid: n.tid, type: n.type, webhook: n.webhook })),
      );
      expect(data.every((d) => d['type'] === type)).toBe(true);
    }
  });

  it('mixes both types, interleaved, in allownednumbers', async () => {
    const reply = await call('/api/allownednumbers', creds());
    expect(reply.json['success']).toBe('1');
    const types = (reply.json['data'] as Json[]).map((d) => d['type']);
    expect(types).toHaveLength(DEMO_ACCOUNT.numbers.length);
    expect(new Set(types)).toEqual(new Set(['local', 'tollfree']));
    const sorted = [...types].sort();
    expect(types).not.toEqual(sorted);
    expect(types).not.toEqual([...sorted].reverse());
  });

  it('keeps the accounts apart', async () => {
    const reply = await call('/api/allownednumbers', creds(SECOND_DEMO_CREDENTIALS));
    const tids = (reply.json['data'] as Json[]).map((d) => d['tid']);
    expect(tids).toEqual(SECOND_DEMO_ACCOUNT.numbers.map((n) => n.tid));
    expect(tids.every((t) => String(t).startsWith('TN2-'))).toBe(true);
  });

  it('rejects a bad or missing number_type with 400', async () => {
    const bad = await call('/api/ownednumbers', { ...creds(), number_type: 'mobile' });
    expect(bad.status).toBe(400);
    expect(bad.json['success']).toBe('0');
    expect(String(bad.json['error'])).toMatch(/number_type/);
    const missing = await call('/api/ownednumbers', creds());
    expect(missing.status).toBe(400);
    expect(String(missing.json['error'])).toMatch(/number_type/);
  });
});

describe('transport', () => {
  it('401s on a wrong token without echoing it', async () => {
    const token = 'wrong-token-SENTINEL-91x';
    const reply = await call('/api/allownednumbers', {
      sys_id: DEMO_CREDENTIALS.sysId,
      auth_token: token,
    });
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ success: '0', error: 'invalid credentials' });
    expect(reply.text).not.toContain(token);
    expect(reply.text).not.toContain(DEMO_CREDENTIALS.sysId);

    const swapped = await call('/api/allownednumbers', {
      sys_id: SECOND_DEMO_CREDENTIALS.sysId,
      auth_token: DEMO_CREDENTIALS.authToken,
    });
    expect(swapped.status).toBe(401);
  });

  it('accepts parameters from the query string, with the body winning on conflict', async () => {
    const viaQuery = await call(
      '/api/ownednumbers',
      {},
      { query: { ...creds(), number_type: 'tollfree' } },
    );
    expect(viaQuery.status).toBe(200);
    expect((viaQuery.json['data'] as Json[]).map((d) => d['type'])).toEqual(
      DEMO_ACCOUNT.numbers.filter((n) => n.type === 'tollfree').map(() => 'tollfree'),
    );

    const conflict = await call(
      '/api/ownednumbers',
      { number_type: 'local' },
      { query: { ...creds(), number_type: 'tollfree' } },
    );
    expect(conflict.status).toBe(200);
    const types = (conflict.json['data'] as Json[]).map((d) => d['type']);
    expect(types.length).toBeGreaterThan(0);
    expect(types.every((t) => t === 'local')).toBe(true);
  });

  it('404s unknown paths and 405s non-POST on known paths', async () => {
    const unknown = await call('/api/nope', creds());
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ success: '0', error: 'not found' });
    const get = await call('/api/allownednumbers', {}, { method: 'GET', query: creds() });
    expect(get.status).toBe(405);
    expect(get.json['success']).toBe('0');
  });

  it('delays responses by latencyMs', async () => {
    const latencyMs = 150;
    const slow = await startSimulator({ latencyMs });
    try {
      expect(slow.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const started = performance.now();
      const reply = await call('/api/allownednumbers', creds(), { base: slow.url });
      const elapsed = performance.now() - started;
      expect(reply.status).toBe(200);
      expect(elapsed).toBeGreaterThanOrEqual(latencyMs);
    } finally {
      await slow.close();
    }
  });
});

describe('observer and extra accounts (what support/recording-upstream.ts builds on)', () => {
  it('tells the observer of every answer, unknown paths too, and waits the extra ms it asks', async () => {
    const seen: Omit<AnsweredRequest, 'params'>[] = [];
    const params: Record<string, string>[] = [];
    let written = 0;
    const guest: SimulatorCredentials = { sysId: 'AC-guest', authToken: 'guest-token' };
    const observed = await startSimulator({
      accounts: [{ credentials: guest, numbers: DEMO_ACCOUNT.numbers }],
      observer: {
        answering({ params: sent, ...rest }) {
          seen.push(rest);
          params.push(Object.fromEntries(sent));
          return rest.operation === 'ownednumbers' ? 120 : 0;
        },
        written: () => void (written += 1),
      },
    });
    try {
      const all = await call('/api/allownednumbers', creds(guest), { base: observed.url });
      expect((all.json['data'] as Json[]).length).toBe(DEMO_ACCOUNT.numbers.length);
      await call('/api/nope', {}, { base: observed.url });
      const started = performance.now();
      await call('/api/ownednumbers', { ...creds(), number_type: 'local' }, { base: observed.url });
      expect(performance.now() - started).toBeGreaterThanOrEqual(120);
      expect(seen).toEqual([
        { operation: 'allownednumbers', accountSysId: 'AC-guest', status: 200 },
        { operation: null, accountSysId: null, status: 404 },
        { operation: 'ownednumbers', accountSysId: DEMO_CREDENTIALS.sysId, status: 200 },
      ]);
      expect(params[2]).toEqual({ ...creds(), number_type: 'local' });
      expect(written).toBe(3);
      // The demo simulator knows only the demo accounts.
      expect((await call('/api/allownednumbers', creds(guest))).status).toBe(401);
    } finally {
      await observed.close();
    }
  });

  it('refuses a negative latency', async () => {
    await expect(startSimulator({ latencyMs: -1 })).rejects.toThrow(RangeError);
  });
});

describe('arrivals (live updates in demo mode)', () => {
  it('puts a delivered message at the head of one simulator’s history, newer than the rest', async () => {
    const other = await startSimulator();
    try {
      const message = other.deliver(DEMO_CREDENTIALS.sysId, BIG.tid, 'hello from the test');
      const reply = await history(BIG.tid, BIG.number, 0, 2, DEMO_CREDENTIALS, other.url);
      expect(reply.json['total_message_count']).toBe(BIG.messages.length + 1);
      expect(reply.json['most_recent_msg_id']).toBe(Number(message.system_id));
      expect(Number(message.system_id)).toBe(Number(BIG.messages[0]?.system_id) + 1);
      expect(messagesOf(reply).map((m) => m['message_id'])).toEqual([
        message.message_id,
        BIG.messages[0]?.message_id,
      ]);
      expect(messagesOf(reply)[0]).toMatchObject({
        direction: 'inbound',
        body: 'hello from the test',
      });
      expect(Date.parse(`${message.GMTdate.replace(' ', 'T')}Z`)).toBeGreaterThan(
        Date.now() - 2_000,
      );
      // The shared demo data and every other simulator are untouched.
      const untouched = await history(BIG.tid, BIG.number, 0, 1);
      expect(untouched.json['total_message_count']).toBe(BIG.messages.length);
    } finally {
      await other.close();
    }
  });

  it("rings a number's loopback webhook when a message arrives there, and no other number's", async () => {
    const rings: Array<{ path: string; body: string }> = [];
    const hooks = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        rings.push({ path: req.url ?? '', body });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const other = await startSimulator();
    try {
      const port = (hooks.address() as AddressInfo).port;
      other.setWebhooks((tid) => `http://127.0.0.1:${port}/ring/${tid}`);
      const message = other.deliver(DEMO_CREDENTIALS.sysId, BIG.tid, 'ring ring');
      await vi.waitFor(() => expect(rings).toHaveLength(1), { timeout: 2_000 });
      expect(rings[0]!.path).toBe(`/ring/${BIG.tid}`);
      expect(JSON.parse(rings[0]!.body)).toMatchObject({
        tid: BIG.tid,
        message_id: message.message_id,
      });
      // The numbers list shows the webhook as set.
      const owned = await call('/api/allownednumbers', creds(), { base: other.url });
      const set = (owned.json['data'] as Array<Record<string, unknown>>).find(
        (n) => n['tid'] === BIG.tid,
      );
      expect(set?.['webhook']).toBe(`http://127.0.0.1:${port}/ring/${BIG.tid}`);
    } finally {
      await other.close();
      await new Promise((resolve) => hooks.close(resolve));
    }
  });

  it('dates arrivals when they arrive: every 5 s, 5 s apart, starting now', async () => {
    // Only the interval and the clock are faked: the HTTP server keeps real timers.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    vi.setSystemTime(Date.parse('2031-05-01T10:00:00Z'));
    const other = await startSimulator({ arrivalsEveryMs: 5_000 });
    try {
      vi.advanceTimersByTime(10_000);
      const first = DEMO_ACCOUNT.numbers[0]!;
      const reply = await history(first.tid, first.number, 0, 3, DEMO_CREDENTIALS, other.url);
      expect(messagesOf(reply).map((m) => [m['body'], m['GMTdate']])).toEqual([
        ['Demo arrival 2: is this thing on?', '2031-05-01 10:00:10'],
        ['Demo arrival 1: is this thing on?', '2031-05-01 10:00:05'],
        [first.messages[0]?.body, first.messages[0]?.GMTdate],
      ]);
    } finally {
      vi.useRealTimers();
      await other.close();
    }
  });

  it('makes messages arrive by themselves with arrivalsEveryMs', async () => {
    const other = await startSimulator({ arrivalsEveryMs: 20 });
    try {
      const first = DEMO_ACCOUNT.numbers[0]!;
      const total = async () => {
        const reply = await history(first.tid, first.number, 0, 1, DEMO_CREDENTIALS, other.url);
        return Number(reply.json['total_message_count']);
      };
      // Two arrivals take 40 ms; the rest of the budget is for a loaded machine.
      await untilAsync(async () => (await total()) >= first.messages.length + 2, 5_000);
    } finally {
      await other.close();
    }
  });
});

/**
 * The simulator's demo data, made at module load from fixed specs and seeded PRNGs: every process
 * sees the same messages, ids and order. Only the dates move: the history is dated to end when
 * the module loads (DEMO_HISTORY_ENDS_AT), never in the future.
 */
import {
  DEMO_CREDENTIALS,
  SECOND_DEMO_CREDENTIALS,
  type SimulatorCredentials,
} from './demo-credentials.js';

export type DemoNumberType = 'local' | 'tollfree';

/** A message record as the service sends it (`system_id` a numeric string on a loose number). */
export interface DemoMessage {
  readonly system_id: number | string;
  readonly message_id: string;
  readonly GMTdate: string;
  readonly tid: string;
  readonly phone: string;
  readonly direction: 'outbound' | 'inbound';
  readonly body: string;
  readonly mms: 'yes' | 'no';
  readonly mms_url: string;
  readonly status: string;
}

export interface DemoNumber {
  readonly number: string;
  readonly tid: string;
  readonly type: DemoNumberType;
  /** '' when the number has no webhook configured. */
  readonly webhook: string;
  readonly optin: 'yes' | 'no';
  /** When the number was created, `YYYY-MM-DD HH:MM:SS` (UTC). */
  readonly createdDate: string;
  /** Its history sends every integer field (counts, ids) as a numeric string. */
  readonly looselyTyped: boolean;
  /** Newest first: index 0 is the most recent message. Timestamps strictly decrease. */
  readonly messages: readonly DemoMessage[];
}

export interface DemoAccount {
  readonly credentials: SimulatorCredentials;
  /** Owned numbers in the order `allownednumbers` returns them (types interleaved). */
  readonly numbers: readonly DemoNumber[];
}

/** mulberry32: tiny seeded PRNG returning floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** murmur3 fmix32: a bijection on 32-bit integers (distinct inputs give distinct outputs). */
function fmix32(input: number): number {
  let h = input >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hex8(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}

/** Seconds since the epoch (UTC) -> `YYYY-MM-DD HH:MM:SS`. */
export function formatUpstreamTimestamp(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/** A spec's ISO date, moved so that the newest demo message is dated DEMO_HISTORY_ENDS_AT. */
function shifted(iso: string): number {
  return Date.parse(iso) / 1000 + HISTORY_SHIFT_SECONDS;
}

const OUTBOUND_BODIES: readonly string[] = [
  'Your appointment is confirmed for Tuesday at 10:30 AM. Reply C to cancel.',
  'Your verification code is 482913. It expires in 10 minutes.',
  'Thanks for your order! It has shipped and should arrive Thursday.',
  'Reminder: your table for 4 is booked tonight at 7 PM.',
  'Your package was delivered to the front door. \u{1F4E6}',
  'Flash sale: 20% off everything this weekend only. Reply STOP to opt out.',
  'Hi! Your technician is on the way and will arrive in about 30 minutes.',
  'Payment of $42.17 received. Thank you!',
  'Your prescription is ready for pickup at the pharmacy counter.',
  'We received your support request (#5521). An agent will reply shortly.',
  'Here is the photo of the repair you asked for.',
  'Your subscription renews on the 1st. Reply HELP for help.',
  'Good news: your claim has been approved.',
  'Reply "YES" to confirm your RSVP for Saturday.',
];

const INBOUND_BODIES: readonly string[] = [
  'Yes, that works for me.',
  'C',
  'Can we move it to 3 PM instead?',
  'STOP',
  'Thanks! Got it \u{1F44D}',
  'Is the store open on Sunday?',
];

const FAILED_STATUSES: readonly string[] = [
  '400 Undeliverable: carrier rejected',
  '400 Invalid destination number',
  '400 Undeliverable: recipient opted out',
];

const MMS_EXTENSIONS: readonly string[] = ['jpg', 'jpg', 'jpg', 'png', 'gif'];

export type NumberSpec = Pick<
  DemoNumber,
  'number' | 'tid' | 'type' | 'webhook' | 'optin' | 'looselyTyped'
> & {
  /** ISO dates: created, and the newest message's (ignored when messageCount is 0). */
  readonly created: string;
  readonly newest: string;
  readonly messageCount: number;
  readonly seed: number;
};

export type AccountSpec = ReturnType<typeof accountSpec>;

/** number, tid (`-T-`: toll-free), webhook path ('' for none), created, newest, messages, flag. */
type NumberRow = [string, string, string, string, string, number, ('loose' | 'opt-out')?];

/**
 * An account's spec from one row per number; number i (0-based) is seeded `seedBase + i + 1`.
 * `systemIdBase`: the first system_id handed out in the account; ids then increase with time.
 */
function accountSpec(
  credentials: SimulatorCredentials,
  systemIdBase: number,
  seedBase: number,
  contacts: string,
  rows: readonly NumberRow[],
) {
  const numbers = rows.map(
    ([number, tid, hook, created, newest, messageCount, flag], i): NumberSpec => ({
      number,
      tid,
      type: tid.includes('-T-') ? 'tollfree' : 'local',
      webhook: hook === '' ? '' : `https://hooks.example.com/sms/${hook}`,
      optin: flag === 'opt-out' ? 'no' : 'yes',
      created: `2026-${created}Z`,
      newest: `2026-${newest}Z`,
      messageCount,
      looselyTyped: flag === 'loose',
      seed: seedBase + i + 1,
    }),
  );
  return { credentials, systemIdBase, contacts: contacts.split(' '), numbers };
}

/**
 * When the seeded history ends (epoch seconds): the start of this process, so that arrivals
 * (dated when they arrive) are the newest by date as well as by position.
 */
export const DEMO_HISTORY_ENDS_AT = Math.floor(Date.now() / 1000);

/** The demo accounts; numbers in allownednumbers order (local and tollfree interleaved). */
export const DEMO_ACCOUNT_SPECS: readonly AccountSpec[] = [
  accountSpec(
    DEMO_CREDENTIALS,
    4_100_000,
    0x1000,
    '15551230123 15551230187 15551230244 15551230309 15551230472 15551230518 ' +
      '15551230660 15551230731 15551230895 15551230902 15551231046 15551231178',
    [
      ['15125550101', 'TN-L-0001', 'tn-l-0001', '01-04T09:15:00', '12-18T16:42:10', 450],
      ['18885550111', 'TN-T-0001', '', '01-20T14:00:00', '12-02T11:05:33', 120],
      ['15125550102', 'TN-L-0002', '', '02-11T08:30:00', '11-27T19:20:05', 42, 'loose'],
      ['18885550112', 'TN-T-0002', 'tn-t-0002', '03-02T10:00:00', '10-30T13:48:51', 64],
      ['15125550103', 'TN-L-0003', 'tn-l-0003', '09-14T12:00:00', '09-14T12:00:00', 0],
      ['18885550113', 'TN-T-0003', 'tn-t-0003', '05-06T07:45:00', '08-21T22:10:09', 5],
      ['15125550104', 'TN-L-0004', 'tn-l-0004', '04-18T16:20:00', '12-09T08:03:47', 17, 'opt-out'],
    ],
  ),
  accountSpec(
    SECOND_DEMO_CREDENTIALS,
    7_300_000,
    0x2000,
    '15559870114 15559870236 15559870358 15559870471 15559870593 15559870625',
    [
      ['14155550201', 'TN2-L-0001', 'acme-west', '02-02T15:00:00', '12-11T10:11:12', 33],
      ['18775550211', 'TN2-T-0001', '', '03-15T09:00:00', '11-05T17:30:45', 25],
      ['14155550202', 'TN2-L-0002', 'acme-support', '06-01T12:30:00', '10-19T06:58:21', 8],
    ],
  ),
];

const HISTORY_SHIFT_SECONDS =
  DEMO_HISTORY_ENDS_AT -
  Math.max(
    ...DEMO_ACCOUNT_SPECS.flatMap((a) => a.numbers.filter((n) => n.messageCount > 0)).map(
      (n) => Date.parse(n.newest) / 1000,
    ),
  );

/** Oldest-first timestamps, strictly increasing, the last one exactly at `newest`. */
function messageTimestamps(spec: NumberSpec, rand: () => number): number[] {
  const n = spec.messageCount;
  if (n === 0) return [];
  const created = shifted(spec.created);
  const newest = shifted(spec.newest);
  const width = Math.floor((newest - created) / n);
  if (width < 2) throw new Error(`demo-data: time span too small for ${spec.tid}`);
  // Slot i covers [created + i*width + 1, created + (i+1)*width - 1]; slots never overlap,
  // and the newest message sits after the last slot.
  const times = Array.from(
    { length: n - 1 },
    (_, i) => created + i * width + 1 + Math.floor(rand() * (width - 1)),
  );
  return [...times, newest];
}

/** Messages before their system_id, which buildAccount hands out across the account. */
function draftMessages(account: AccountSpec, spec: NumberSpec) {
  const rand = mulberry32(spec.seed);
  const randomWord = () => Math.floor(rand() * 4294967296);
  return messageTimestamps(spec, rand).map((epochSeconds) => {
    const inbound = rand() < 0.22;
    const mms = rand() < 0.18;
    const status = inbound
      ? '200 Message received'
      : rand() < 0.09
        ? pick(rand, FAILED_STATUSES)
        : '200 Message delivered';
    return {
      epochSeconds,
      phone: pick(rand, account.contacts),
      direction: inbound ? ('inbound' as const) : ('outbound' as const),
      body: pick(rand, inbound ? INBOUND_BODIES : OUTBOUND_BODIES),
      mmsExtension: mms ? pick(rand, MMS_EXTENSIONS) : null,
      status,
      // message_id past its first 8 hex digits, which come from the (unique) system_id.
      idTail: hex8(randomWord()) + hex8(randomWord()) + hex8(randomWord()),
      systemId: 0,
    };
  });
}

/** An account's numbers and their messages, as the spec and its seeds make them. */
export function buildAccount(account: AccountSpec): DemoAccount {
  const drafts = account.numbers.map((spec) => draftMessages(account, spec));
  // system_id increases with message time across the whole account (a stable sort: ties in
  // number order), with small gaps as if other accounts' traffic were interleaved.
  const chronological = drafts.flat().sort((a, b) => a.epochSeconds - b.epochSeconds);
  const gapRand = mulberry32(account.systemIdBase);
  let nextId = account.systemIdBase;
  for (const draft of chronological) {
    nextId += 1 + Math.floor(gapRand() * 7);
    draft.systemId = nextId;
  }

  const numbers = account.numbers.map(({ created, newest, messageCount, seed, ...number }, i) => {
    const messages = [...(drafts[i] ?? [])].reverse().map((draft): DemoMessage => {
      const messageId = hex8(fmix32(draft.systemId ^ 0x5bd1e995)) + draft.idTail;
      return Object.freeze({
        system_id: number.looselyTyped ? String(draft.systemId) : draft.systemId,
        message_id: messageId,
        GMTdate: formatUpstreamTimestamp(draft.epochSeconds),
        tid: number.tid,
        phone: draft.phone,
        direction: draft.direction,
        body: draft.body,
        mms: draft.mmsExtension === null ? 'no' : 'yes',
        mms_url:
          draft.mmsExtension === null
            ? ''
            : `https://media.example.com/mms/${messageId}.${draft.mmsExtension}`,
        status: draft.status,
      });
    });
    const createdDate = formatUpstreamTimestamp(shifted(created));
    return Object.freeze({ ...number, createdDate, messages: Object.freeze(messages) });
  });

  return Object.freeze({ credentials: account.credentials, numbers: Object.freeze(numbers) });
}

export const DEMO_ACCOUNTS = Object.freeze(DEMO_ACCOUNT_SPECS.map(buildAccount));
export const [DEMO_ACCOUNT, SECOND_DEMO_ACCOUNT] = DEMO_ACCOUNTS as [DemoAccount, DemoAccount];

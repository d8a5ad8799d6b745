/**
 * A scripted upstream whose message histories grow on command, for live updates and paging:
 * accounts own numbers, each number's history is newest first, and `add()` puts new messages
 * at its head, as the service would when they arrive.
 */
import {
  ownedNumbersReply,
  startScriptedUpstream,
  type ScriptedCall,
  type ScriptedReply,
  type ScriptedUpstream,
} from './scripted-upstream.js';

export interface GrowingUpstream extends ScriptedUpstream {
  /** Adds `count` messages at the head of `tid`'s history; returns their ids, oldest first. */
  add(tid: string, count: number): string[];
  /** Adds one message whose GMTdate is not a timestamp (an unreadable record); returns its id. */
  addUnreadable(tid: string): string;
  /** Calls of one operation made with `sysId`'s credentials. */
  callsOf(operation: string, sysId?: string): number;
  /** Makes every call fail with `reply` until called again with null. */
  failWith(reply: ScriptedReply | null): void;
}

interface RawMessage {
  readonly message_id: string;
  readonly system_id: number;
  readonly body: string;
  readonly gmtDate?: string;
}

/** `accounts`: sys_id -> the tids it owns (the token is "tok-" + sys_id). */
export async function startGrowingUpstream(
  accounts: Readonly<Record<string, readonly string[]>>,
): Promise<GrowingUpstream> {
  const histories = new Map<string, RawMessage[]>();
  let sequence = 0;
  let failure: ScriptedReply | null = null;
  const add = (tid: string, count: number): string[] => {
    const list = histories.get(tid) ?? [];
    const added: RawMessage[] = [];
    for (let i = 0; i < count; i += 1) {
      sequence += 1;
      added.push({
        message_id: sequence.toString(16).padStart(32, '0'),
        system_id: sequence,
        body: `message ${sequence} on ${tid}`,
      });
    }
    histories.set(tid, [...added.reverse(), ...list]);
    return added.map((m) => m.message_id).reverse();
  };
  for (const tids of Object.values(accounts)) for (const tid of tids) add(tid, 3);

  const script = (call: ScriptedCall): ScriptedReply => {
    const sysId = call.params.get('sys_id') ?? '';
    const owned = accounts[sysId];
    if (!owned || call.params.get('auth_token') !== `tok-${sysId}`)
      return { status: 401, text: '' };
    if (failure) return failure;
    if (call.operation !== 'smshistory') return ownedNumbersReply(owned);
    const tid = call.params.get('tid') ?? '';
    if (!owned.includes(tid)) return { json: { success: '0' } };
    const all = histories.get(tid) ?? [];
    const start = Number(call.params.get('history_start'));
    const end = Number(call.params.get('history_end'));
    const page = all.slice(start, end);
    return {
      json: {
        success: '1',
        'message_count_requested ': end - start,
        total_message_count: all.length,
        created_date: '2026-01-01 00:00:00',
        most_recent_msg_id: all[0]?.system_id ?? 0,
        most_recent_date: '2026-11-23 10:00:00',
        tid,
        number: call.params.get('number'),
        optin: 'yes',
        messages: page.map((m) => ({
          system_id: m.system_id,
          message_id: m.message_id,
          GMTdate: m.gmtDate ?? '2026-11-23 10:00:00',
          tid,
          phone: '15550000000',
          direction: 'inbound',
          body: m.body,
          mms: 'no',
          mms_url: '',
          status: '200 Message delivered',
        })),
      },
    };
  };
  const upstream = await startScriptedUpstream(script);
  return {
    ...upstream,
    add,
    addUnreadable(tid) {
      const [id = ''] = add(tid, 1);
      const list = histories.get(tid) ?? [];
      histories.set(tid, [{ ...list[0]!, gmtDate: 'soon' }, ...list.slice(1)]);
      return id;
    },
    callsOf: (operation, sysId) =>
      upstream.calls.filter(
        (c) =>
          c.operation === operation && (sysId === undefined || c.params.get('sys_id') === sysId),
      ).length,
    failWith(reply) {
      failure = reply;
    },
  };
}

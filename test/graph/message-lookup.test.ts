/**
 * Finding a message by id among the newest of each number, against real loopback services: one
 * owned-numbers call and one history call per number for a request however many ids it looks
 * up; an older or unknown id is null, unless a number could not be read (then its failure); a
 * record found but unreadable fails with its own error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type GatewayLimits } from '../../src/config/config.js';
import { Identities } from '../../src/core/identity.js';
import { createContext, type GatewayContext } from '../../src/graph/context.js';
import { createCursorCodec } from '../../src/graph/cursors.js';
import { findRecentMessage, MESSAGE_NODE_SCAN } from '../../src/graph/message-lookup.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import {
  accountScript,
  historyReply,
  startScriptedUpstream,
  type ScriptedCall,
  type ScriptedReply,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';
import { basicAuth } from '../fixtures/harness.js';
import {
  directOverSimulator,
  directUpstreamClient,
  type DirectClient,
} from '../fixtures/upstream-client.js';

const identity = new Identities(null).fromHeaders(new Headers(basicAuth(DEMO_CREDENTIALS)));

function contextOver(direct: DirectClient, limits: Partial<GatewayLimits> = {}): GatewayContext {
  return createContext(identity, {
    client: direct.client,
    limits: { ...DEFAULT_LIMITS, ...limits },
    cursors: createCursorCodec(null),
  });
}

describe('findRecentMessage, over the simulator', () => {
  const over = directOverSimulator();

  const [busy, second] = DEMO_ACCOUNT.numbers;

  it("finds recent messages of any of the account's numbers, with one read per number", async () => {
    const context = contextOver(over.direct);
    const newest = busy!.messages[0]!;
    const other = second!.messages[3]!;
    const [a, b] = await Promise.all([
      findRecentMessage(newest.message_id, context),
      findRecentMessage(other.message_id, context),
    ]);
    expect(a).toMatchObject({ id: newest.message_id, tid: busy!.tid, body: newest.body });
    expect(b).toMatchObject({ id: other.message_id, tid: second!.tid });
    expect(await findRecentMessage(busy!.messages[1]!.message_id, context)).not.toBeNull();
    const operations = over.upstream.calls.map((c) => c.operation);
    expect(operations.filter((o) => o === 'allownednumbers')).toHaveLength(1);
    expect(operations.filter((o) => o === 'smshistory')).toHaveLength(DEMO_ACCOUNT.numbers.length);
  });

  it(`is null for an unknown id, and for a message older than the newest ${MESSAGE_NODE_SCAN}`, async () => {
    const context = contextOver(over.direct);
    expect(busy!.messages.length).toBeGreaterThan(MESSAGE_NODE_SCAN);
    expect(await findRecentMessage('f'.repeat(32), context)).toBeNull();
    const old = busy!.messages[MESSAGE_NODE_SCAN]!;
    expect(await findRecentMessage(old.message_id, context)).toBeNull();
    const last = busy!.messages[MESSAGE_NODE_SCAN - 1]!;
    expect(await findRecentMessage(last.message_id, context)).toMatchObject({
      id: last.message_id,
    });
  });

  it('looks no further back than MAX_HISTORY_RANGE when it is narrower', async () => {
    const context = contextOver(over.direct, { maxHistoryRange: 5 });
    expect(await findRecentMessage(busy!.messages[4]!.message_id, context)).not.toBeNull();
    expect(await findRecentMessage(busy!.messages[5]!.message_id, context)).toBeNull();
    const ends = over.upstream.calls
      .filter((c) => c.operation === 'smshistory')
      .map((c) => c.params.history_end);
    expect(new Set(ends)).toEqual(new Set(['5']));
  });
});

describe('findRecentMessage, when a number cannot be read', () => {
  const FOUND = 'a'.repeat(32);
  const UNREADABLE = 'b'.repeat(32);

  /** T-A answers one message; T-B one that cannot be read; T-C fails. */
  function history(call: ScriptedCall): ScriptedReply {
    const tid = call.params.get('tid');
    if (tid === 'T-C') return { status: 500, text: 'internal error' };
    const reply = historyReply(call) as { json: { messages: Record<string, unknown>[] } };
    if (tid === 'T-B') {
      const [message] = reply.json.messages;
      reply.json.messages = [{ ...message, message_id: UNREADABLE, GMTdate: 'not a date' }];
    }
    return reply;
  }

  let upstream: ScriptedUpstream;
  let direct: DirectClient;
  beforeAll(async () => {
    upstream = await startScriptedUpstream(accountScript(['T-A', 'T-B', 'T-C'], history));
    direct = directUpstreamClient(upstream.url);
  });
  afterAll(async () => {
    await direct?.close();
    await upstream?.close();
  });

  it('still finds a message of a number that was read', async () => {
    expect(await findRecentMessage(FOUND, contextOver(direct))).toMatchObject({
      id: FOUND,
      tid: 'T-A',
    });
  });

  it("fails an id it did not find with the failed number's error, not null", async () => {
    await expect(findRecentMessage('c'.repeat(32), contextOver(direct))).rejects.toMatchObject({
      name: 'UpstreamError',
      code: 'UPSTREAM_ERROR',
    });
  });

  it('fails a record found but unreadable with its own error', async () => {
    await expect(findRecentMessage(UNREADABLE, contextOver(direct))).rejects.toThrow(/GMTdate/);
  });
});

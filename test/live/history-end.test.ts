/**
 * Live updates on either kind of service: one reading `history_end` as exclusive, one as
 * inclusive (the gateway told which, UPSTREAM_HISTORY_END). Detection, catching up after a burst
 * wider than a poll page, and filling the gap behind a resume token deliver every message once,
 * oldest first, and the service is sent its own reading of the end.
 */
import { describe, expect, it } from 'vitest';
import { liveStacks, type LiveStack } from '../fixtures/live-stack.js';
import type { SseStream } from '../fixtures/sse.js';
import { until } from '../../support/wait.js';

const POLL_MS = 50;
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ADDED = 'subscription($t: String) { messageAdded(tids: ["T-A"], resumeToken: $t) { id } }';

const stacks = liveStacks();

const idsOf = (stream: SseStream) =>
  stream.events.map((e) => (e.data?.messageAdded as { id: string } | null)?.id);

describe.each(['exclusive', 'inclusive'] as const)(
  'a service reading history_end as %s',
  (historyEnd) => {
    function stack(): Promise<LiveStack> {
      return stacks.start(
        { 'AC-1': ['T-A'] },
        { live: { pollMs: POLL_MS, pageSize: 20 }, resilience: { historyEnd } },
      );
    }

    /** Until `count` more history reads have reached the upstream. */
    async function reads(s: LiveStack, count: number) {
      const target = s.upstream.callsOf('smshistory') + count;
      await until(() => s.upstream.callsOf('smshistory') >= target);
    }

    /** The history_end values sent so far. */
    function endsSent(s: LiveStack): number[] {
      return s.upstream.calls
        .filter((c) => c.operation === 'smshistory')
        .map((c) => Number(c.params.get('history_end')));
    }

    it('detects new messages, and catches up on a burst wider than a poll page', async () => {
      const s = await stack();
      const stream = await s.open(ADDED, ONE);
      // The subscription's own read of the head, and the poll loop's first (what is there).
      await reads(s, 2);
      // Each read 20 messages: history_end 20, or 19 on an inclusive service.
      expect(endsSent(s).slice(0, 2)).toEqual(historyEnd === 'inclusive' ? [19, 19] : [20, 20]);
      const few = s.upstream.add('T-A', 2);
      await stream.waitFor(2);
      const burst = s.upstream.add('T-A', 45);
      await stream.waitFor(47);
      await reads(s, 2);
      expect(idsOf(stream)).toEqual([...few, ...burst]);
      expect(stream.events.every((e) => e.errors === undefined)).toBe(true);
    });

    it('fills the gap behind a resume token exactly: nothing missed, nothing twice', async () => {
      const s = await stack();
      const first = await s.open(ADDED, ONE);
      await reads(s, 2);
      const early = s.upstream.add('T-A', 3);
      await first.waitFor(3);
      first.close();
      const missed = s.upstream.add('T-A', 25);
      const resumed = await s.open(ADDED, ONE, { t: first.ids[0] });
      await resumed.waitFor(27);
      // The new poll loop's first look must come first: what it finds there is not news.
      await reads(s, 2);
      const later = s.upstream.add('T-A', 1);
      await resumed.waitFor(28);
      await reads(s, 2);
      expect(idsOf(resumed)).toEqual([...early.slice(1), ...missed, ...later]);
    });
  },
);

/**
 * `history(start, end)` as its description says: `end` exclusive, `end - start` messages, several
 * ranges of one number sliced out of one call, on the built-in simulator in either reading of
 * `history_end` (the gateway told which), and the description saying how the end is translated.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/start.js';
import { loadConfig } from '../../src/config/config.js';
import { schema } from '../../src/graph/schema.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../fixtures/harness.js';

interface Ids {
  number: Record<string, { requestedCount: number; messages: { id: string }[] }>;
}

describe.each(['exclusive', 'inclusive'] as const)(
  'a simulator reading history_end as %s',
  (historyEnd) => {
    const stack = sharedStack({ historyEnd }, { resilience: { historyEnd } });

    it('serves [start, end): end - start messages, and overlapping ranges from one call', async () => {
      stack.simulator.resetCalls();
      const { body } = await executeText<Ids>(
        stack.gateway,
        `{ number(tid: "TN-L-0001") {
        all: history(start: 0, end: 5) { requestedCount messages { id } }
        head: history(start: 0, end: 3) { requestedCount messages { id } }
        tail: history(start: 2, end: 5) { requestedCount messages { id } }
        none: history(start: 4, end: 4) { requestedCount messages { id } }
    } }`,
        undefined,
        basicAuth(DEMO_CREDENTIALS),
      );
      const ids = (key: string) => body.data?.number[key]?.messages.map((m) => m.id) ?? [];
      expect(ids('all')).toHaveLength(5);
      expect(ids('head')).toEqual(ids('all').slice(0, 3));
      expect(ids('tail')).toEqual(ids('all').slice(2, 5));
      expect(ids('none')).toEqual([]);
      expect(body.data?.number['tail']?.requestedCount).toBe(3);
      const histories = stack.simulator.calls.filter((c) => c.operation === 'smshistory');
      expect(histories).toHaveLength(1);
      // The one call covers 0..5: history_end 5, or 4 for a service that reads it inclusively.
      expect(histories[0]?.params).toMatchObject({
        history_start: '0',
        history_end: historyEnd === 'inclusive' ? '4' : '5',
      });
    });
  },
);

it("describes end exactly, and says it is translated to the service's reading", () => {
  const number = schema.getType('Number');
  expect(isObjectType(number)).toBe(true);
  const field = isObjectType(number)
    ? number.getFields()['history']?.args.find((a) => a.name === 'end')
    : undefined;
  expect(field?.description).toMatch(/^Exclusive/);
  expect(field?.description).toMatch(/`end - start` is the count/);
  expect(field?.description).toMatch(/UPSTREAM_HISTORY_END/);
});

describe('demo mode with an inclusive simulator (Config.simulatorHistoryEnd)', () => {
  it('starts the simulator inclusive, and the gateway told so reads it inclusive', async () => {
    const config = {
      ...loadConfig({
        UPSTREAM_HISTORY_END: 'inclusive',
        LIVE_POLL_MS: '0',
        METRICS: 'off',
        LOG_LEVEL: 'silent',
      }),
      simulatorHistoryEnd: 'inclusive' as const,
    };
    const app = await createApp(config, { logger: false });
    // The demo simulator records nothing: the history call is read as undici sends it.
    const bodies: string[] = [];
    const onRequest = (message: unknown): void => {
      const { path, body } = (message as { request: { path: string; body: unknown } }).request;
      if (path.endsWith('/api/smshistory')) bodies.push(String(body));
    };
    subscribe('undici:request:create', onRequest);
    try {
      const { body } = await executeText<Ids>(
        app.gateway,
        `{ number(tid: "TN-L-0001") { history(start: 2, end: 6) { requestedCount messages { id } } } }`,
        undefined,
        basicAuth(DEMO_CREDENTIALS),
      );
      expect(body.data?.number['history']?.messages).toHaveLength(4);
      expect(body.data?.number['history']?.requestedCount).toBe(4);
      const sent = Object.fromEntries(new URLSearchParams(bodies[0]));
      expect(sent).toMatchObject({ history_start: '2', history_end: '5' });
    } finally {
      unsubscribe('undici:request:create', onRequest);
      await app.close();
    }
  });
});

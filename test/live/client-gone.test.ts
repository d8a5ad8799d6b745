/**
 * A live subscription ends when its client leaves, whenever it leaves: sms_live_subscriptions
 * drops with it. A client that left over SSE while its subscription was still starting (the
 * service not yet answered) used to leave it held, polled and counted until the copy closed.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { accountScript, type ScriptedCall } from '../../support/scripted-upstream.js';
import { sleep, until, untilAsync } from '../../support/wait.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';
import { LocalBus } from '../../src/live/bus.js';
import { ticksOf } from './barriers.js';

const AC1 = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id } }';
const stacks = scriptedStacks();
const servers: Array<() => void> = [];
afterEach(() => {
  for (const close of servers.splice(0)) close();
});

function subscriptionsGauge(text: string): number {
  const line = text
    .split('\n')
    .find((l) => l.startsWith('sms_live_subscriptions{kind="subscriptions"}'));
  return Number(line?.split(' ').at(-1));
}

describe('a client that leaves', () => {
  it('over SSE while its subscription starts: the subscription ends and the gauge drops', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const script = accountScript(['T-A']);
    const metrics = createMetrics();
    const bus = new LocalBus();
    const loops = ticksOf(bus);
    const s = await stacks.start(
      // Everything but history reads waits: the subscription is still being set up.
      (call: ScriptedCall) =>
        call.operation === 'smshistory' ? script(call) : { until: held, reply: () => script(call) },
      { live: { pollMs: 50, bus }, metrics },
    );
    const { server } = s.test.app;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const { port } = server.address() as AddressInfo;
    const leave = new AbortController();
    const opened = fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...AC1 },
      body: JSON.stringify({ query: ON_A }),
      signal: leave.signal,
    }).catch(() => undefined);
    await until(() => s.calls() > 0);
    leave.abort();
    await opened;
    // The server has seen the connection close before the service answers.
    const connections = () =>
      new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count)));
    await untilAsync(async () => (await connections()) === 0);
    release();
    // The subscription is made once the service answers: it reads the head of its history.
    await until(() => s.calls((c) => c.operation === 'smshistory') > 0);
    await until(() => s.test.live!.stats.subscriptions === 0, 2_000);
    const scrape = await s.gateway.fetch('http://gateway.test/metrics');
    expect(subscriptionsGauge(await scrape.text())).toBe(0);
    // And nothing polls for it.
    await until(() => s.test.live!.stats.topics === 0, 2_000);
    // Its loop is over, a tick under way included: a poll from here on is one too many.
    await until(() => loops.stopped() === 1);
    const polls = s.calls((c) => c.operation === 'smshistory');
    // Time passing is the claim: four poll intervals bring no poll.
    await sleep(200);
    expect(s.calls((c) => c.operation === 'smshistory')).toBe(polls);
  });
});

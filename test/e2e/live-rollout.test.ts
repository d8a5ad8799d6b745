/**
 * A rollout under live traffic, on the built process (dist/main.js): two copies without Redis
 * behind a loopback switch, messages arriving every 150 ms. The serving copy gets SIGTERM;
 * graphql-sse's client, graphql-ws's client and Apollo Client (the recipes of
 * docs/live-updates.md, support/recipes/) reconnect through the switch to the other copy
 * and resume with their tokens: every message exactly once, in order.
 */
import { describe, expect, it } from 'vitest';
import { expectResumedAfterSigterm, liveFleetRun } from '../fixtures/live-fleet-run.js';
import { exited, portOf } from '../../support/live-fleet.js';
import { until } from '../../support/wait.js';

const POLL_MS = 200;

const run = liveFleetRun();

describe('SIGTERM of the serving copy while messages arrive', () => {
  it('graphql-sse, graphql-ws and Apollo reconnect to the next copy and resume: every message once, in order', async () => {
    const upstream = await run.upstream();
    const [a, b] = await Promise.all([run.copy(upstream, POLL_MS), run.copy(upstream, POLL_MS)]);
    const lb = await run.loopbackSwitch(portOf(a));
    const http = `http://127.0.0.1:${lb.port}/graphql`;
    const ws = `ws://127.0.0.1:${lb.port}/graphql`;

    const everyone = [
      run.overSse('graphql-sse', http),
      run.overWs('graphql-ws', ws),
      run.overApollo('Apollo', http, ws),
    ];
    const stream = run.arrivals(upstream, 150);
    await until(() => everyone.every((s) => s.ids.length >= 3), 10_000);

    // The balancer sends new connections to B; A drains.
    lb.to(portOf(b));
    const beforeSigterm = stream.ids.length;
    a.child.kill('SIGTERM');
    expect(await exited(a), a.stderr()).toBe(0);
    await expectResumedAfterSigterm(stream, everyone, beforeSigterm);
  });
});

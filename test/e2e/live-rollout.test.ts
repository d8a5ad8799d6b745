/**
 * A rollout under live traffic, on the built process (dist/main.js): two copies without Redis
 * behind a loopback switch, messages arriving every 150 ms. The serving copy gets SIGTERM;
 * graphql-sse's client, graphql-ws's client and Apollo Client (the recipes of
 * docs/live-updates.md, support/recipes/) reconnect through the switch to the other copy
 * and resume with their tokens: every message exactly once, in order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { GatewayProcess } from '../fixtures/gateway-process.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import {
  LIVE_ACCOUNT,
  LIVE_AUTHORIZATION,
  arrivals,
  closeRun,
  exited,
  expectedFor,
  portOf,
  recorder,
  startLiveCopy,
} from '../../support/live-fleet.js';
import { startLoopbackSwitch, type LoopbackSwitch } from '../../support/loopback-switch.js';
import { createLiveApolloClient, watchOverApollo } from '../../support/recipes/live-apollo.js';
import { createLiveSseClient, watchOverSse } from '../../support/recipes/live-sse.js';
import { createLiveWsClient, watchOverWs } from '../../support/recipes/live-ws.js';
import { until } from '../../support/wait.js';

const POLL_MS = 200;

let upstream: GrowingUpstream | undefined;
let lb: LoopbackSwitch | undefined;
const copies: GatewayProcess[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await Promise.all(copies.splice(0).map((copy) => copy.close()));
  await lb?.close();
  await upstream?.close();
});

describe('SIGTERM of the serving copy while messages arrive', () => {
  it('graphql-sse, graphql-ws and Apollo reconnect to the next copy and resume: every message once, in order', async () => {
    upstream = await startGrowingUpstream(LIVE_ACCOUNT);
    const [a, b] = await Promise.all([
      startLiveCopy(upstream, POLL_MS),
      startLiveCopy(upstream, POLL_MS),
    ]);
    copies.push(a!, b!);
    lb = await startLoopbackSwitch(portOf(a!));
    const http = `http://127.0.0.1:${lb.port}/graphql`;
    const ws = `ws://127.0.0.1:${lb.port}/graphql`;

    const sse = recorder('graphql-sse');
    const sseClient = createLiveSseClient(http, LIVE_AUTHORIZATION);
    cleanups.push(() => sseClient.dispose());
    cleanups.push(watchOverSse(sseClient, ['T-A'], sse));

    const overWs = recorder('graphql-ws');
    const wsClient = createLiveWsClient(ws, LIVE_AUTHORIZATION, { webSocketImpl: WebSocket });
    cleanups.push(() => wsClient.dispose());
    cleanups.push(watchOverWs(wsClient, ['T-A'], overWs));

    const apollo = recorder('Apollo');
    const apolloClient = createLiveApolloClient(http, ws, LIVE_AUTHORIZATION, {
      ws: { webSocketImpl: WebSocket },
    });
    cleanups.push(() => apolloClient.stop());
    cleanups.push(watchOverApollo(apolloClient, ['T-A'], apollo));

    const everyone = [sse, overWs, apollo];
    const stream = arrivals(upstream, 150);
    cleanups.push(() => stream.stop());
    await until(() => everyone.every((s) => s.ids.length >= 3), 10_000);

    // The balancer sends new connections to B; A drains.
    lb.to(portOf(b!));
    const beforeSigterm = stream.ids.length;
    a!.child.kill('SIGTERM');
    expect(await exited(a!)).toBe(0);
    // Until every client has five messages that arrived after the SIGTERM.
    const later = () => stream.ids.slice(beforeSigterm + 2);
    await until(
      () => everyone.every((s) => later().filter((id) => s.ids.includes(id)).length >= 5),
      15_000,
    );
    await closeRun(stream, everyone);

    for (const subscriber of everyone) {
      expect(subscriber.errors, subscriber.name).toEqual([]);
      expect(subscriber.resyncs, subscriber.name).toBe(0);
      // Its first message arrived before the SIGTERM: the reconnect is covered.
      expect(stream.ids.indexOf(subscriber.ids[0]!), subscriber.name).toBeLessThan(beforeSigterm);
      expect(subscriber.ids, subscriber.name).toEqual(expectedFor(subscriber, stream.ids));
    }
  });
});

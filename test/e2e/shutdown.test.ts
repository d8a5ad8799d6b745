/**
 * Shutdown, proven on the real process (dist/main.js): SIGTERM while a request waits on a slow
 * upstream call lets that request finish with its data, then the process exits 0.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import {
  ownedNumbersReply,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';

const AUTHORIZATION = `Basic ${Buffer.from('AC-shutdown:token').toString('base64')}`;

let upstream: ScriptedUpstream;
let gateway: GatewayProcess;
let releaseUpstream: () => void = () => undefined;
let upstreamCalled: () => void = () => undefined;
const called = new Promise<void>((resolve) => (upstreamCalled = resolve));
const released = new Promise<void>((resolve) => (releaseUpstream = resolve));

beforeAll(async () => {
  // The upstream holds its answer until the test lets it go: the request is in flight for sure.
  upstream = await startScriptedUpstream(() => {
    upstreamCalled();
    return { until: released, reply: ownedNumbersReply(['TN-1', 'TN-2']) };
  });
  gateway = await startGatewayProcess({ UPSTREAM_URL: upstream.url });
});

afterAll(async () => {
  releaseUpstream();
  await gateway.close();
  await upstream.close();
});

describe('SIGTERM', () => {
  it('lets the request in flight finish with its data, then exits 0', async () => {
    const answer = fetch(gateway.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTHORIZATION },
      body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
    });
    await called;
    const exited = once(gateway.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    gateway.child.kill('SIGTERM');
    // The process is draining, not gone: it keeps the request it has while the upstream is slow.
    await new Promise((resolve) => setImmediate(resolve));
    expect(gateway.child.exitCode).toBeNull();
    releaseUpstream();

    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      data: { ownedNumbers: [{ tid: 'TN-1' }, { tid: 'TN-2' }] },
    });
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});

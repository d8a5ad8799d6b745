/**
 * A drain with no balancer in front: busy keep-alive clients connected straight to the copy
 * (a Kubernetes Service, a sidecar, a script). SIGTERM must reset nothing a client wrote: every
 * request either gets its answer, or fails to connect once the copy has stopped listening (a
 * request never sent, which any client may send elsewhere). A connection accepted a moment before
 * the copy stops listening still answers the request already on its way.
 */
import { once } from 'node:events';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import {
  keepPosting,
  newTally,
  requestLines,
  rootCause,
  type Tally,
} from '../fixtures/fleet-load.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { until } from '../../support/wait.js';

const CLIENTS = 8;
const DRAINS = 2;

let simulator: RunningSimulator;

beforeAll(async () => {
  simulator = await startSimulator({ latencyMs: 5 });
});

afterAll(async () => {
  await simulator?.close();
});

/**
 * Whether a failed request never sent its request: the connection was refused, or reset before it
 * was established (the kernel resets connections still queued on a listening socket that closes;
 * undici reports ECONNRESET from `connect`, before writing a byte). Anything else reached a
 * request the client had written.
 */
function neverSent(error: unknown): boolean {
  const { code, syscall } = rootCause(error);
  return code === 'ECONNREFUSED' || (code === 'ECONNRESET' && syscall === 'connect');
}

/** One client on its own keep-alive connection, POSTing until the copy has exited. */
async function client(gateway: GatewayProcess, tally: Tally, running: () => boolean) {
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  try {
    await keepPosting(gateway.endpoint, tally, running, { dispatcher, excused: neverSent });
  } finally {
    await dispatcher.close();
  }
}

describe('draining a copy with busy keep-alive clients connected directly', () => {
  it.each(Array.from({ length: DRAINS }, (_, i) => i + 1))(
    'drain %i resets no request already written, and exits 0',
    async () => {
      const gateway = await startGatewayProcess({
        UPSTREAM_URL: simulator.url,
        SHUTDOWN_READINESS_DELAY_MS: '500',
        LOG_LEVEL: 'info',
      });
      const tally = newTally();
      let exitedYet = false;
      const clients = Array.from({ length: CLIENTS }, () =>
        client(gateway, tally, () => !exitedYet),
      );
      try {
        await until(() => requestLines(gateway) > 50, 30_000);
        const exited = once(gateway.child, 'exit') as Promise<[number | null, string | null]>;
        const before = tally.ok;
        gateway.child.kill('SIGTERM');
        const [code, signal] = await exited;
        exitedYet = true;
        await Promise.all(clients);

        expect(tally.failures).toEqual([]);
        expect({ code, signal }).toEqual({ code: 0, signal: null });
        // It served on through the readiness delay, each answer closing its connection.
        expect(tally.ok).toBeGreaterThan(before);
      } finally {
        exitedYet = true;
        await gateway.close();
      }
    },
    30_000,
  );
});

/**
 * A drain with no balancer in front: busy keep-alive clients connected straight to the copy
 * (a Kubernetes Service, a sidecar, a script). SIGTERM must reset nothing a client wrote: every
 * request either gets its answer, or fails to connect once the copy has stopped listening (a
 * request never sent, which any client may send elsewhere). A connection accepted a moment before
 * the copy stops listening still answers the request already on its way.
 */
import { once } from 'node:events';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_CREDENTIALS,
  startSimulator,
  type RunningSimulator,
} from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { until } from '../../support/wait.js';

const CLIENTS = 8;
const DRAINS = 2;
const AUTHORIZATION = `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`;
const BODY = JSON.stringify({ query: '{ ownedNumbers { tid } }' });

let simulator: RunningSimulator;

beforeAll(async () => {
  simulator = await startSimulator({ latencyMs: 5 });
});

afterAll(async () => {
  await simulator?.close();
});

interface Tally {
  ok: number;
  /** Requests that never left: the copy no longer listened (see neverSent). */
  refused: number;
  failures: string[];
}

/**
 * Whether a failed fetch never sent its request: the connection was refused, or reset before it
 * was established (the kernel resets connections still queued on a listening socket that closes;
 * undici reports ECONNRESET from `connect`, before writing a byte). Anything else reached a
 * request the client had written.
 */
function neverSent(error: unknown): boolean {
  let current = error as { cause?: unknown; code?: unknown; syscall?: unknown } | undefined;
  while (current?.cause) current = current.cause as typeof current;
  return (
    current?.code === 'ECONNREFUSED' ||
    (current?.code === 'ECONNRESET' && current.syscall === 'connect')
  );
}

function describeError(error: unknown): string {
  let current = error as { cause?: unknown; code?: unknown; message?: unknown } | undefined;
  while (current?.cause) current = current.cause as typeof current;
  const syscall = (current as { syscall?: unknown } | undefined)?.syscall;
  return `${String(current?.code ?? current?.message ?? current)} (${String(syscall)})`;
}

/** One keep-alive client sending POSTs back to back until the copy has exited. */
async function client(
  gateway: GatewayProcess,
  tally: Tally,
  running: () => boolean,
): Promise<void> {
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  try {
    while (running()) {
      try {
        const response = await request(gateway.endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: AUTHORIZATION },
          body: BODY,
          dispatcher,
        });
        const body = (await response.body.json()) as { data?: unknown; errors?: unknown };
        if (response.statusCode === 200 && body.data && !body.errors) tally.ok += 1;
        else
          tally.failures.push(`HTTP ${response.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
      } catch (error) {
        if (neverSent(error)) {
          tally.refused += 1;
          await new Promise((resolve) => setImmediate(resolve));
        } else tally.failures.push(describeError(error));
      }
    }
  } finally {
    await dispatcher.close();
  }
}

const requestLines = (gateway: GatewayProcess): number =>
  gateway
    .logs()
    .split('\n')
    .filter((line) => line.includes('"msg":"request"')).length;

describe('draining a copy with busy keep-alive clients connected directly', () => {
  it.each(Array.from({ length: DRAINS }, (_, i) => i + 1))(
    'drain %i resets no request already written, and exits 0',
    async () => {
      const gateway = await startGatewayProcess({
        UPSTREAM_URL: simulator.url,
        SHUTDOWN_READINESS_DELAY_MS: '500',
        LOG_LEVEL: 'info',
      });
      const tally: Tally = { ok: 0, refused: 0, failures: [] };
      let exitedYet = false;
      const clients = Array.from({ length: CLIENTS }, () =>
        client(gateway, tally, () => !exitedYet),
      );
      try {
        await until(() => requestLines(gateway) > 50, 10_000);
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

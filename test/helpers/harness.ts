/**
 * The test harness: a real simulator on 127.0.0.1 (the upstream), a real undici Pool to it, and
 * the gateway called in-process through `gateway.fetch` (no port for the gateway itself).
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type ExecutionResult } from 'graphql';
import type { Pool } from 'undici';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/server.js';
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorCredentials,
  type SimulatorOptions,
} from '../../src/simulator/index.js';
import { DEFAULT_LIMITS, type GatewayLimits } from '../../src/config.js';
import type { Logger } from '../../src/logger.js';
import { createUpstream } from '../../src/upstream/index.js';
import { LocalBus } from '../../src/live/bus.js';
import { LiveHub, type LiveHubOptions } from '../../src/live/hub.js';
import type { UpstreamSettings } from '../../src/config.js';
import type { ManagedUpstreamClient, TrafficOptions } from '../../src/upstream/traffic.js';

export interface TestGateway {
  readonly gateway: Gateway;
  /** The live hub, when `live` options were given. */
  readonly live: LiveHub | null;
  readonly client: ManagedUpstreamClient;
  readonly pool: Pool;
  close(): Promise<void>;
}

export interface TestGatewayOptions extends Partial<
  Omit<GatewayOptions, 'client' | 'limits' | 'logger' | 'live'>
> {
  readonly timeoutMs?: number;
  readonly limits?: Partial<GatewayLimits>;
  /** Tests opt into retries and the breakers; by default one attempt per call, breakers effectively off. */
  readonly resilience?: Partial<Omit<UpstreamSettings, 'url' | 'timeoutMs'>>;
  /** Turns live subscriptions on (a LocalBus unless a bus is given). */
  readonly live?: Partial<Omit<LiveHubOptions, 'client'>> & { readonly pollMs: number };
  /** Fine-tuning of the adaptive limit. */
  readonly traffic?: Pick<TrafficOptions, 'initialConcurrency' | 'minConcurrency'>;
  readonly logger?: Logger | false;
}

/** A gateway whose upstream is the service at `upstreamUrl` (usually a loopback simulator). */
export function createTestGateway(
  upstreamUrl: string,
  options: TestGatewayOptions = {},
): TestGateway {
  const { timeoutMs, limits, resilience, traffic, logger, metrics, live, ...gatewayOptions } =
    options;
  const deadline = timeoutMs ?? 2_000;
  const { client, pool } = createUpstream(
    new URL(upstreamUrl),
    {
      timeoutMs: deadline,
      attemptTimeoutMs: deadline,
      connections: 32,
      defaultRetryAfterMs: 5_000,
      retries: 0,
      retryBaseDelayMs: 10,
      breakerThreshold: 1_000_000,
      breakerCooldownMs: 1_000,
      ...resilience,
    },
    {
      ...(metrics ? { observer: metrics.upstream } : {}),
      ...(traffic ? { traffic } : {}),
    },
  );
  if (metrics) {
    metrics.watchBreaker(() => client.breakerState());
    metrics.watchConcurrency(() => client.concurrency());
  }
  const hub = live
    ? new LiveHub({ client, bus: live.bus ?? new LocalBus(), maxPerAccount: 50, ...live })
    : null;
  if (metrics && hub) metrics.watchLive(() => hub.stats);
  const gateway = createGateway({
    client,
    live: hub,
    ...gatewayOptions,
    limits: { ...DEFAULT_LIMITS, ...limits },
    logger: logger ?? false,
    metrics: metrics ?? null,
  });
  return {
    gateway,
    live: hub,
    client,
    pool,
    close: async () => {
      await hub?.close();
      await pool.close();
    },
  };
}

/** A simulator and a gateway in front of it, started together. */
export async function startStack(
  simulatorOptions: SimulatorOptions = {},
  gatewayOptions: TestGatewayOptions = {},
): Promise<{ simulator: RunningSimulator; gateway: Gateway; close(): Promise<void> }> {
  const simulator = await startSimulator(simulatorOptions);
  const test = createTestGateway(simulator.url, gatewayOptions);
  return {
    simulator,
    gateway: test.gateway,
    close: async () => {
      await test.close();
      await simulator.close();
    },
  };
}

export function basicAuth({ sysId, authToken }: SimulatorCredentials): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${sysId}:${authToken}`).toString('base64')}` };
}

export function pairAuth({ sysId, authToken }: SimulatorCredentials): Record<string, string> {
  return { 'x-sys-id': sysId, 'x-auth-token': authToken };
}

export interface GraphQLResponse<TData> {
  readonly status: number;
  readonly body: ExecutionResult<TData, { code?: string } & Record<string, unknown>>;
}

/** POSTs a typed document to the gateway in-process and returns the HTTP status and parsed body. */
export async function execute<TData, TVariables>(
  gateway: Gateway,
  document: TypedDocumentNode<TData, TVariables>,
  ...[variables, headers]: TVariables extends Record<string, never>
    ? [variables?: TVariables, headers?: Record<string, string>]
    : [variables: TVariables, headers?: Record<string, string>]
): Promise<GraphQLResponse<TData>> {
  return executeText<TData>(gateway, print(document), variables ?? undefined, headers);
}

/** Like execute(), for documents that are deliberately not in the typed set (invalid ones). */
export async function executeText<TData = Record<string, unknown>>(
  gateway: Gateway,
  query: string,
  variables?: unknown,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<TData>> {
  const body = JSON.stringify({ query, variables });
  const response = await gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: {
      'content-length': String(Buffer.byteLength(body)),
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...headers,
    },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as GraphQLResponse<TData>['body'],
  };
}

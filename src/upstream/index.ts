/** The upstream stack one gateway uses: a keep-alive pool, the client over it, traffic control. */
import type { Pool } from 'undici';
import type { UpstreamSettings } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { createUpstreamClient, createUpstreamPool, type UpstreamObserver } from './client.js';
import {
  withTrafficControl,
  type ManagedUpstreamClient,
  type TrafficOptions,
} from '../traffic/traffic.js';
import { CredentialMemory } from '../traffic/verification.js';
import { shareCallsInFlight } from './shared-calls.js';

export interface Upstream {
  readonly client: ManagedUpstreamClient;
  readonly pool: Pool;
}

export interface UpstreamExtras {
  readonly logger?: Logger;
  /** Where retries are rolled up (TrafficOptions.warnings). */
  readonly warnings?: TrafficOptions['warnings'];
  readonly observer?: UpstreamObserver;
  /** Fine-tuning of the adaptive limit (tests, bench); defaults otherwise. */
  readonly traffic?: Pick<TrafficOptions, 'initialConcurrency' | 'minConcurrency'>;
  /** Verdicts on credentials, shared with the response cache. @default a new one (see settings) */
  readonly credentials?: CredentialMemory;
  /** The secret naming accounts (GATEWAY_SECRET) when no memory is given. @default this process's key */
  readonly secret?: string | null;
  /** Told of each attempt sent to the service (TrafficOptions.onAttempt). */
  readonly onAttempt?: TrafficOptions['onAttempt'];
  /** Admission's ledger, which orders waiting calls (TrafficOptions.usage). */
  readonly usage?: TrafficOptions['usage'];
}

export function createUpstream(
  baseUrl: URL,
  settings: Omit<UpstreamSettings, 'url'>,
  extras: UpstreamExtras = {},
): Upstream {
  const { timeoutMs, connections, accountSharePercent, verifiedTtlMs, refusedTtlMs } = settings;
  const pool = createUpstreamPool(baseUrl, { connections, timeoutMs });
  const managed = withTrafficControl(
    createUpstreamClient({
      dispatcher: pool,
      baseUrl,
      timeoutMs,
      historyEnd: settings.historyEnd,
      ...(extras.observer ? { observer: extras.observer } : {}),
    }),
    {
      ...settings,
      maxInFlight: connections,
      accountShare: accountSharePercent / 100,
      credentials:
        extras.credentials ??
        new CredentialMemory({
          secret: extras.secret ?? null,
          acceptedTtlMs: verifiedTtlMs,
          refusedTtlMs,
        }),
      ...extras.traffic,
      ...(extras.logger ? { logger: extras.logger } : {}),
      ...(extras.warnings ? { warnings: extras.warnings } : {}),
      ...(extras.observer?.refused ? { onRefused: extras.observer.refused } : {}),
      ...(extras.onAttempt ? { onAttempt: extras.onAttempt } : {}),
      ...(extras.usage ? { usage: extras.usage } : {}),
    },
  );
  const client = shareCallsInFlight(managed, extras.observer);
  return { client, pool };
}

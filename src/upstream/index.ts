/** The upstream stack one gateway uses: a keep-alive pool, the client over it, retries and breaker. */
import type { Pool } from 'undici';
import type { UpstreamSettings } from '../config.js';
import type { Logger } from '../logger.js';
import { createUpstreamClient, createUpstreamPool, type UpstreamObserver } from './client.js';
import { withResilience, type ResilientUpstreamClient } from './resilience.js';

export interface Upstream {
  readonly client: ResilientUpstreamClient;
  readonly pool: Pool;
}

export function createUpstream(
  baseUrl: URL,
  settings: Omit<UpstreamSettings, 'url'>,
  extras: { readonly logger?: Logger; readonly observer?: UpstreamObserver } = {},
): Upstream {
  const { timeoutMs } = settings;
  const pool = createUpstreamPool(baseUrl, { connections: settings.connections, timeoutMs });
  const client = withResilience(
    createUpstreamClient({
      dispatcher: pool,
      baseUrl,
      timeoutMs,
      ...(extras.observer ? { observer: extras.observer } : {}),
    }),
    { ...settings, ...(extras.logger ? { logger: extras.logger } : {}) },
  );
  return { client, pool };
}

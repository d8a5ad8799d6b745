/** The upstream stack one gateway uses: a keep-alive pool, the client over it, traffic control. */
import type { Pool } from 'undici';
import type { UpstreamSettings } from '../config/config.js';
import type { UpstreamObserver } from '../core/signals.js';
import { createUpstreamClient, createUpstreamPool } from './client.js';
import {
  withTrafficControl,
  type ManagedUpstreamClient,
  type TrafficOptions,
} from '../traffic/traffic.js';
import { shareCallsInFlight } from './shared-calls.js';

/** What traffic control is told beyond the settings (see TrafficOptions). */
type Told = Pick<TrafficOptions, 'credentials' | 'logger' | 'warnings' | 'ledger'>;
export interface UpstreamExtras extends Told {
  readonly observer?: UpstreamObserver;
  /** Fine-tuning of the adaptive limit (tests, bench); defaults otherwise. */
  readonly traffic?: Pick<TrafficOptions, 'initialConcurrency' | 'minConcurrency'>;
}

export function createUpstream(
  baseUrl: URL,
  settings: Omit<UpstreamSettings, 'url'>,
  extras: UpstreamExtras,
): { readonly client: ManagedUpstreamClient; readonly pool: Pool } {
  const { timeoutMs, connections, accountSharePercent } = settings;
  const { observer, traffic, ...told } = extras;
  const pool = createUpstreamPool(baseUrl, { connections, timeoutMs });
  const client = createUpstreamClient({
    dispatcher: pool,
    baseUrl,
    timeoutMs,
    historyEnd: settings.historyEnd,
    observer,
  });
  const managed = withTrafficControl(client, {
    ...settings,
    ...traffic,
    ...told,
    maxInFlight: connections,
    accountShare: accountSharePercent / 100,
    onRefused: observer?.refused,
  });
  return { client: shareCallsInFlight(managed, observer), pool };
}

/**
 * The one way the gateway reaches Redis, per use: a single server, a Sentinel primary or a Cluster
 * (docs/deploy.md "Redis topologies"); health per use, an outage logged once, QUIT on shutdown.
 * Redis trouble must cost a cache miss, an APQ round-trip or a late live event, never a request.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisSettings } from '../config/config.js';
import type { Logger } from '../observability/logger.js';

/** What each use of Redis is called in logs, metrics and /readiness. */
export type RedisUse = 'cache' | 'apq' | 'live';

/** A bare URL is a single server (tests, embedders). */
export type RedisTarget = URL | RedisSettings;

export type RedisClient = Redis | Cluster;

export type RedisConnection = ReturnType<typeof connectRedis>;

const CONNECT_TIMEOUT_MS = 2_000;
/** A command slower than this fails (the caller goes on without Redis). */
const COMMAND_TIMEOUT_MS: Record<RedisUse, number> = { cache: 500, apq: 500, live: 1_000 };
/** Reconnect quickly at first, then every 2 s at most: an outage is retried, never given up. */
const retryStrategy = (attempt: number): number => Math.min(100 * 2 ** attempt, 2_000);

/** Each use's name in its recovery line (`<name>: Redis reachable again`), and its outage line. */
const LINES: Record<RedisUse, { readonly name: string; readonly down: string }> = {
  cache: { name: 'Response cache', down: 'Response cache unavailable, answering without it' },
  apq: { name: 'APQ store', down: 'APQ store unavailable; clients resend whole queries meanwhile' },
  live: { name: 'live updates', down: 'live updates: Redis unavailable, polls wait for it' },
};

function topologyOf(target: RedisTarget): 'single' | 'sentinel' | 'cluster' {
  if (target instanceof URL) return 'single';
  if (target.clusterNodes.length > 0) return 'cluster';
  return target.sentinels.length > 0 ? 'sentinel' : 'single';
}

/** Opens the connection of one use. It connects in the background: nothing here waits. */
export function connectRedis(
  target: RedisTarget,
  use: RedisUse,
  { logger }: { readonly logger: Logger | false },
) {
  const topology = topologyOf(target);
  const client = createClient(target, {
    // While disconnected, commands fail at once: nothing is replayed after a failover.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS[use],
  });
  // The URL may carry a password: only where Redis is, never the URL, is logged.
  const where = { redis: describeTarget(target), use };
  let connected = false;
  let failing = false;
  let logged = false;
  let closing = false;
  const subscribers: RedisClient[] = [];

  /** Report a failed command: the first failure after a success is logged, with `what`. */
  const failed = (what: string, error: unknown): void => {
    failing = true;
    if (logged || closing) return;
    logged = true;
    const message = error instanceof Error ? error.message : String(error);
    const setting = pointedThereBy(target, error);
    const hint = setting ? ` (${setting})` : '';
    if (logger) logger.warn({ ...where, what }, `${LINES[use].down}: ${message}${hint}`);
  };
  const succeeded = (): void => {
    failing = false;
    if (!logged) return;
    logged = false;
    if (logger && !closing) logger.info(where, `${LINES[use].name}: Redis reachable again`);
  };
  client.on('error', (error: unknown) => failed('connection', error));
  client.on('ready', () => {
    connected = true;
    succeeded();
  });
  // 'close' comes with every lost connection, 'end' once reconnecting is given up (never, here).
  for (const lost of ['close', 'end']) client.on(lost, () => (connected = false));

  let closed: Promise<void> | null = null;
  return {
    topology,
    client,
    /** Connected and no command failed since the last success: 1 in sms_redis_up. */
    get up(): boolean {
      return connected && !failing && !closing;
    },
    /** `command`'s result, or `fallback` when it fails: Redis trouble never fails a request. */
    async attempt<T, F>(what: string, command: () => Promise<T>, fallback: F): Promise<T | F> {
      try {
        const result = await command();
        succeeded();
        return result;
      } catch (error) {
        failed(what, error);
        return fallback;
      }
    },
    /** Resolves true once connected, false after `timeoutMs` (or at once after closing). */
    ready(timeoutMs: number): Promise<boolean> {
      if (client.status === 'ready') return Promise.resolve(true);
      if (closing) return Promise.resolve(false);
      return new Promise((resolve) => {
        const done = (value: boolean): void => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(value);
        };
        const onReady = (): void => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        client.on('ready', onReady);
      });
    },
    /** A second connection for pub/sub; it resubscribes after a reconnect, closes with this one. */
    subscriber(): RedisClient {
      // Offline queue on: a SUBSCRIBE while connecting waits. No ready check: its INFO could race
      // a SUBSCRIBE sent on connect and drop the subscription.
      const subscriber = createClient(target, {
        enableOfflineQueue: true,
        enableReadyCheck: false,
        maxRetriesPerRequest: null,
      });
      subscriber.on('error', (error: unknown) => failed('subscriber', error));
      subscriber.on('ready', succeeded);
      subscribers.push(subscriber);
      return subscriber;
    },
    /** QUITs every connection of this use (pending replies arrive first); idempotent. */
    close(): Promise<void> {
      closing = true;
      closed ??= Promise.allSettled([client, ...subscribers].map(quit)).then(() => undefined);
      return closed;
    },
  };
}

/** QUIT lets replies already on their way arrive; a connection that cannot QUIT is cut. */
async function quit(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/** Options of every node; undefined leaves ioredis' default (it fills options in with `defaults`). */
type CommonOptions = Pick<
  RedisOptions,
  'enableOfflineQueue' | 'enableReadyCheck' | 'maxRetriesPerRequest' | 'commandTimeout'
>;

function createClient(target: RedisTarget, common: CommonOptions): RedisClient {
  const { enableOfflineQueue, ...perNodeCommon } = common;
  const url = target instanceof URL ? target : target.url;
  const perNode: RedisOptions = {
    ...authOf(url),
    connectTimeout: CONNECT_TIMEOUT_MS,
    ...perNodeCommon,
  };
  const topology = topologyOf(target);
  if (topology === 'cluster' && !(target instanceof URL)) {
    const seeds = [{ host: url.hostname, port: portOf(url) }, ...target.clusterNodes];
    return new Cluster(seeds, {
      enableOfflineQueue,
      enableReadyCheck: common.enableReadyCheck,
      clusterRetryStrategy: retryStrategy,
      slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
      redisOptions: perNode,
    });
  }
  const node = {
    ...perNode,
    db: Number(url.pathname.slice(1) || '0'),
    enableOfflineQueue,
    retryStrategy,
  };
  if (topology === 'sentinel' && !(target instanceof URL)) {
    return new Redis({
      ...node,
      reconnectOnError: reconnectOnReadOnly,
      sentinels: [...target.sentinels],
      name: target.sentinelName ?? 'mymaster',
      // A replica handed out by a sentinel unaware of the failover is left for the next one.
      role: 'master',
      sentinelRetryStrategy: retryStrategy,
      // Follows +switch-master at once, not ~10 s later when the demoted primary cuts its clients.
      failoverDetector: true,
      // Sentinels have their own password, or none: sent the primary's, they warn on stderr.
      ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
      ...(url.protocol === 'rediss:' ? { enableTLSForSentinelMode: true } : {}),
    });
  }
  return new Redis({ ...node, host: url.hostname, port: portOf(url) });
}

/** READONLY: a demoted primary; reconnect via the sentinels (`2` resends, failing at once). */
export function reconnectOnReadOnly(error: Error): 2 | false {
  return error.message.startsWith('READONLY') ? 2 : false;
}

function authOf(url: URL): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  return {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: { servername: url.hostname } } : {}),
  };
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : 6379;
}

/** Which setting sent a connection where it was refused (or found no sentinel), else null. */
export function pointedThereBy(target: RedisTarget, error: unknown): string | null {
  const message = error instanceof Error ? error.message : String(error);
  const topology = topologyOf(target);
  if (topology === 'sentinel' && message.startsWith('All sentinels are unreachable'))
    return 'REDIS_SENTINELS points there';
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ECONNREFUSED' && !message.includes('ECONNREFUSED')) return null;
  if (target instanceof URL || topology === 'single') return 'REDIS_URL points there';
  const address = /(\S+):(\d+)\s*$/.exec(message);
  const at = (nodes: RedisSettings['sentinels']): boolean =>
    address !== null &&
    nodes.some(
      (n) => n.host === address[1]?.replace(/^\[|\]$/g, '') && n.port === Number(address[2]),
    );
  if (topology === 'sentinel')
    return at(target.sentinels)
      ? 'REDIS_SENTINELS points there'
      : 'the primary the sentinels of REDIS_SENTINELS name for REDIS_SENTINEL_NAME';
  if (at(target.clusterNodes)) return 'REDIS_CLUSTER_NODES points there';
  return at([{ host: target.url.hostname, port: portOf(target.url) }])
    ? 'REDIS_URL points there'
    : 'a node of the cluster (REDIS_URL, REDIS_CLUSTER_NODES)';
}

/** host:port, the sentinels or the cluster's seeds: what logs may say (never a password). */
function describeTarget(target: RedisTarget): string {
  const url = target instanceof URL ? target : target.url;
  const node = `${url.hostname}:${portOf(url)}`;
  const topology = topologyOf(target);
  if (target instanceof URL || topology === 'single') return node;
  const list = (nodes: RedisSettings['sentinels']): string =>
    nodes.map((n) => `${n.host}:${n.port}`).join(',');
  if (topology === 'sentinel')
    return `sentinel ${target.sentinelName ?? 'mymaster'} via ${list(target.sentinels)}`;
  return `cluster ${node},${list(target.clusterNodes)}`;
}

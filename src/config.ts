/** Environment -> validated, frozen configuration. Every bad value is reported, each in one line. */

export interface Config {
  /** TCP port the gateway listens on. @default 4000 */
  readonly port: number;
  /** Interface the gateway binds. @default "0.0.0.0" */
  readonly host: string;
  /** The service's base URL; null starts the built-in simulator instead. @default null */
  readonly upstreamUrl: URL | null;
  /** Deadline for one upstream call, in milliseconds. @default 10000 */
  readonly upstreamTimeoutMs: number;
  /** Keep-alive connections to the upstream, shared by all requests. @default 128 */
  readonly upstreamConnections: number;
  /** Upstream calls one GraphQL request may have in flight at once. @default 16 */
  readonly upstreamConcurrency: number;
  /** Widest `history(start, end)` range accepted, as `end - start`. @default 1000 */
  readonly maxHistoryRange: number;
  /** Artificial latency of the built-in simulator, in milliseconds. @default 0 */
  readonly simulatorLatencyMs: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };

  const config: Config = {
    port: int('PORT', 4000, 0, 65535),
    host: env.HOST?.trim() || '0.0.0.0',
    upstreamUrl: readUpstreamUrl(env.UPSTREAM_URL, problems),
    upstreamTimeoutMs: int('UPSTREAM_TIMEOUT_MS', 10_000, 1, 600_000),
    upstreamConnections: int('UPSTREAM_CONNECTIONS', 128, 1, 10_000),
    upstreamConcurrency: int('UPSTREAM_CONCURRENCY', 16, 1, 1_000),
    maxHistoryRange: int('MAX_HISTORY_RANGE', 1000, 1, 1_000_000),
    simulatorLatencyMs: int('SIMULATOR_LATENCY_MS', 0, 0, 60_000),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

function readUpstreamUrl(raw: string | undefined, problems: string[]): URL | null {
  const text = raw?.trim();
  if (!text) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problems.push('UPSTREAM_URL must be an absolute http(s) URL, e.g. https://sms.example.com');
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`UPSTREAM_URL must use http or https (got ${url.protocol.replace(':', '')})`);
    return null;
  }
  // Credentials travel per request in the form body; a URL carrying some would be a second, static secret.
  if (url.username || url.password) {
    problems.push('UPSTREAM_URL must not contain credentials; clients send them per request');
    return null;
  }
  if (url.search || url.hash) {
    problems.push('UPSTREAM_URL must not have a query string or fragment');
    return null;
  }
  return url;
}

import { describe, expect, it } from 'vitest';
import {
  CONFIG_VARIABLES,
  ConfigError,
  DEFAULT_LIMITS,
  DEMO_SECRET,
  loadConfig,
  loadDoctorSettings,
} from '../../src/config/config.js';
import { RETIRED_VARIABLES } from '../../src/config/settings.js';

const HMAC_KEY = 'k'.repeat(32);
const PREVIOUS_KEY = 'p'.repeat(32);

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      port: 4000,
      host: '0.0.0.0',
      logLevel: 'info',
      heapGrowingPercent: 50,
      upstream: {
        url: null,
        timeoutMs: 10_000,
        attemptTimeoutMs: 10_000,
        connections: 256,
        defaultRetryAfterMs: 5_000,
        retries: 2,
        breakerThreshold: 5,
        breakerCooldownMs: 3_000,
      },
      limits: {
        maxHistoryRange: 1000,
        maxUpstreamCalls: 250,
        maxCost: 100_000,
        maxResponseBytes: 8 * 1024 * 1024,
      },
      responseCache: {
        ttlMs: 0,
        redisUrl: null,
        staleIfErrorMs: 0,
        maxBytes: 64 * 1024 * 1024,
        maxEntryBytes: 1024 * 1024,
      },
      secret: { current: DEMO_SECRET, previous: null, source: 'demo' },
      metrics: true,
      graphiql: true,
      metricsPort: null,
      metricsHost: '0.0.0.0',
    });
  });

  it("gives DEFAULT_LIMITS, taken from the settings' defaults, for an empty environment", () => {
    expect(loadConfig({}).limits).toEqual(DEFAULT_LIMITS);
  });

  it('reads LOG_LEVEL and UPSTREAM_HISTORY_END in any case', () => {
    const config = loadConfig({ LOG_LEVEL: ' WARN ', UPSTREAM_HISTORY_END: 'Inclusive' });
    expect([config.logLevel, config.upstream.historyEnd]).toEqual(['warn', 'inclusive']);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      PORT: '8080',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      UPSTREAM_URL: 'https://sms.example.com/v2/',
      UPSTREAM_TIMEOUT_MS: '2500',
      UPSTREAM_HISTORY_END: 'inclusive',
      UPSTREAM_CONNECTIONS: '10',
      LIVE_MAX_SUBSCRIPTIONS: '900',
      WS_MAX_CONNECTIONS: '80',
      GATEWAY_PUBLIC_URL: 'https://sms-gateway.example.com/edge',
      MAX_HISTORY_RANGE: '200',
      MAX_BODY_BYTES: '5000',
      MAX_ALIASES: '5',
      MAX_DEPTH: '7',
      MAX_QUERY_COST: '9',
      MAX_RESPONSE_BYTES: '65536',
      SIMULATOR_LATENCY_MS: '20',
      SIMULATOR_ARRIVALS_MS: '2000',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
      PERSISTED_OPERATIONS: 'ops.json',
      METRICS: 'off',
      METRICS_PORT: '9464',
      METRICS_HOST: '10.0.0.5',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
      CACHE_TTL_MS: '30000',
      REDIS_URL: 'redis://redis.internal:6380/2',
      GATEWAY_SECRET: HMAC_KEY,
      GATEWAY_SECRET_PREVIOUS: PREVIOUS_KEY,
      LIVE_POLL_MS: '1500',
      LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT: '7',
      CACHE_STALE_IF_ERROR_MS: '300000',
      CACHE_MAX_BYTES: '8000000',
      INSTANCE_ID: 'gw-eu-1.pod-7',
      SHUTDOWN_READINESS_DELAY_MS: '15000',
      SHUTDOWN_TIMEOUT_MS: '20000',
      KEEP_ALIVE_TIMEOUT_MS: '75000',
      REDIS_SENTINELS: 'sentinel-1:26379, sentinel-2:26379',
      REDIS_SENTINEL_NAME: 'gateway',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
      GRAPHIQL: 'on',
    });
    expect(config).toEqual({
      instanceId: 'gw-eu-1.pod-7',
      port: 8080,
      host: '127.0.0.1',
      logLevel: 'warn',
      upstream: {
        url: new URL('https://sms.example.com/v2/'),
        timeoutMs: 2500,
        historyEnd: 'inclusive',
        attemptTimeoutMs: 2500,
        connections: 10,
        defaultRetryAfterMs: 5000,
        retries: 2,
        retryBaseDelayMs: 50,
        breakerThreshold: 5,
        breakerCooldownMs: 3000,
        accountSharePercent: 50,
        verifiedTtlMs: 300_000,
        refusedTtlMs: 60_000,
      },
      admission: { minSeats: 2, maxWaiting: 100, maxWaitMs: 5000 },
      heapGrowingPercent: 50,
      limits: {
        maxHistoryRange: 200,
        maxUpstreamCalls: 250,
        maxNodeIds: 100,
        maxResponseBytes: 65_536,
        maxBodyBytes: 5000,
        maxTokens: 2000,
        maxAliases: 5,
        maxDepth: 7,
        maxDirectives: 20,
        maxCost: 9,
      },
      simulatorLatencyMs: 20,
      simulatorHistoryEnd: 'exclusive',
      simulatorArrivalsMs: 2000,
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      persistedOperationsPath: 'ops.json',
      metrics: false,
      graphiql: true,
      metricsPort: 9464,
      metricsHost: '10.0.0.5',
      tracingEndpoint: new URL('http://otel-collector:4318'),
      responseCache: {
        ttlMs: 30_000,
        redisUrl: new URL('redis://redis.internal:6380/2'),
        staleIfErrorMs: 300_000,
        maxBytes: 8_000_000,
        maxEntryBytes: 1_048_576,
      },
      secret: { current: HMAC_KEY, previous: PREVIOUS_KEY, source: 'configured' },
      redis: {
        url: new URL('redis://redis.internal:6380/2'),
        sentinels: [
          { host: 'sentinel-1', port: 26379 },
          { host: 'sentinel-2', port: 26379 },
        ],
        sentinelName: 'gateway',
        sentinelPassword: 'sentinel-secret',
        clusterNodes: [],
      },
      shutdown: { readinessDelayMs: 15_000, timeoutMs: 20_000, keepAliveTimeoutMs: 75_000 },
      live: {
        pollMs: 1500,
        maxPerAccount: 7,
        maxPerConnection: 20,
        maxTotal: 900,
        maxConnections: 80,
        publicUrl: new URL('https://sms-gateway.example.com/edge'),
      },
    });
    expect(
      Object.isFrozen(config) &&
        Object.isFrozen(config.limits) &&
        Object.isFrozen(config.upstream) &&
        Object.isFrozen(config.responseCache),
    ).toBe(true);
  });

  it('reports every bad value at once, each by name', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        UPSTREAM_TIMEOUT_MS: '0',
        UPSTREAM_URL: 'ftp://x',
        UPSTREAM_CONNECTIONS: '-1',
        LOG_LEVEL: 'loud',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(
      /LOG_LEVEL[\s\S]*PORT[\s\S]*UPSTREAM_URL[\s\S]*UPSTREAM_TIMEOUT_MS[\s\S]*UPSTREAM_CONNECTIONS/,
    );
  });

  it.each([['https://app.example.com/'], ['app.example.com'], ['https://a.example.com,*']])(
    'refuses CORS_ORIGINS=%s',
    (origins) => {
      expect(() => loadConfig({ CORS_ORIGINS: origins })).toThrow(
        /CORS_ORIGINS: .* is not an origin/,
      );
    },
  );

  it('accepts CORS_ORIGINS=* alone, and refuses METRICS values other than on/off', () => {
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    expect(() => loadConfig({ METRICS: 'maybe' })).toThrow(/METRICS must be on or off/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute/,
    );
  });

  it.each([['0'], ['65536'], ['nine'], ['-1']])('refuses METRICS_PORT=%s', (value) => {
    expect(() => loadConfig({ METRICS_PORT: value })).toThrow(
      /METRICS_PORT must be a whole number from 1 to 65535/,
    );
  });

  it('defaults the fleet settings: hostname-pid, a 5 s readiness delay, keep-alive above 60 s', () => {
    const config = loadConfig({});
    expect(config.instanceId).toMatch(new RegExp(`-${process.pid}$`));
    expect(config.shutdown).toEqual({
      readinessDelayMs: 5_000,
      timeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
    });
    expect(config.redis).toBeNull();
  });

  it('reads a Redis Cluster, and refuses topologies that cannot work, naming the variable', () => {
    const cluster = loadConfig({
      REDIS_URL: 'redis://:pw@node-1:7000',
      REDIS_CLUSTER_NODES: 'node-2:7001,[::1]:7002',
      CACHE_HMAC_KEY: HMAC_KEY,
    }).redis;
    expect(cluster?.clusterNodes).toEqual([
      { host: 'node-2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(cluster?.sentinels).toEqual([]);
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig({ CACHE_HMAC_KEY: HMAC_KEY, ...env });
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    };
    expect(problems({ REDIS_CLUSTER_NODES: 'a:1' })).toMatch(/need REDIS_URL/);
    expect(
      problems({ REDIS_URL: 'redis://a:1', REDIS_CLUSTER_NODES: 'b:2', REDIS_SENTINELS: 'c:3' }),
    ).toMatch(/exclude each other/);
    expect(problems({ REDIS_URL: 'redis://a:1/3', REDIS_CLUSTER_NODES: 'b:2' })).toMatch(
      /database in cluster mode/,
    );
    expect(problems({ REDIS_URL: 'redis://:s3cret@a:1', REDIS_SENTINELS: 'b' })).toMatch(
      /REDIS_SENTINELS: "b" is not host:port/,
    );
    expect(problems({ REDIS_URL: 'redis://:s3cret@a:1', REDIS_SENTINELS: 'b' })).not.toContain(
      's3cret',
    );
    expect(problems({ REDIS_URL: 'redis://a:1', REDIS_SENTINEL_PASSWORD: 'not-echoed' })).toMatch(
      /REDIS_SENTINEL_PASSWORD needs REDIS_SENTINELS/,
    );
    expect(
      problems({ REDIS_URL: 'redis://a:1', REDIS_SENTINEL_PASSWORD: 'not-echoed' }),
    ).not.toContain('not-echoed');
    expect(problems({ INSTANCE_ID: 'a b' })).toMatch(/INSTANCE_ID must be/);
    expect(problems({ KEEP_ALIVE_TIMEOUT_MS: '10' })).toMatch(/KEEP_ALIVE_TIMEOUT_MS/);
  });

  it('moves /metrics to port 9464 by default in production, unless METRICS_PORT says otherwise', () => {
    const production = {
      NODE_ENV: 'production',
      UPSTREAM_URL: 'https://sms.example.com',
      GATEWAY_SECRET: HMAC_KEY,
    };
    expect(loadConfig(production).metricsPort).toBe(9464);
    expect(loadConfig({ ...production, METRICS_PORT: '9100' }).metricsPort).toBe(9100);
    expect(loadConfig({ UPSTREAM_URL: 'https://sms.example.com' }).metricsPort).toBeNull();
    expect(() => loadConfig({ ...production, PORT: '9464' })).toThrow(
      /METRICS_PORT defaults to 9464 with NODE_ENV=production, which is PORT/,
    );
  });

  it('listens for metrics where METRICS_HOST says, else where HOST does (read as HOST is)', () => {
    expect(loadConfig({ METRICS_PORT: '9100' }).metricsHost).toBe('0.0.0.0');
    expect(loadConfig({ HOST: ' 10.0.0.5 ', METRICS_PORT: '9100' }).metricsHost).toBe('10.0.0.5');
    const apart = loadConfig({
      HOST: '0.0.0.0',
      METRICS_HOST: ' 127.0.0.1 ',
      METRICS_PORT: '9100',
    });
    expect([apart.host, apart.metricsHost]).toEqual(['0.0.0.0', '127.0.0.1']);
    // Empty, as HOST: the default, not an address.
    expect(loadConfig({ HOST: '::1', METRICS_HOST: '  ' }).metricsHost).toBe('::1');
  });

  it('refuses a METRICS_PORT equal to PORT', () => {
    expect(() => loadConfig({ PORT: '4000', METRICS_PORT: '4000' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    );
  });

  it.each([
    ['not a url'],
    ['https://user:secret@sms.example.com'],
    ['https://sms.example.com/?x=1'],
  ])('refuses UPSTREAM_URL=%s without echoing secrets', (url) => {
    expect(() => loadConfig({ UPSTREAM_URL: url })).toThrow(ConfigError);
    try {
      loadConfig({ UPSTREAM_URL: url });
    } catch (error) {
      expect((error as Error).message).not.toContain('secret');
    }
  });

  describe('live updates', () => {
    it('polls every 3 s by default, 0 turns them off, faster than 100 ms is refused', () => {
      expect(loadConfig({}).live).toEqual({
        pollMs: 3000,
        maxPerAccount: 50,
        maxPerConnection: 20,
        maxTotal: 5_000,
        maxConnections: 1_000,
        publicUrl: null,
      });
      expect(loadConfig({ LIVE_POLL_MS: '0' }).live.pollMs).toBe(0);
      // The doorbell's base: an http(s) URL, never with credentials (it is handed to clients).
      expect(problemsOf({ GATEWAY_PUBLIC_URL: 'https://user:pw@gw.example.com' })).toEqual([
        'GATEWAY_PUBLIC_URL must not contain credentials',
      ]);
      expect(problemsOf({ GATEWAY_PUBLIC_URL: 'gw.example.com' })).toHaveLength(1);
      expect(problemsOf({ LIVE_POLL_MS: '50' })).toEqual([
        'LIVE_POLL_MS must be 0 (off) or a whole number from 100 to 3600000 (got "50")',
      ]);
      expect(problemsOf({ LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT: '0' })).toHaveLength(1);
    });

    it('needs GATEWAY_SECRET with REDIS_URL, since copies share live topics there', () => {
      expect(problemsOf({ REDIS_URL: 'redis://redis:6379' })).toEqual([
        'GATEWAY_SECRET is required with REDIS_URL: the same secret of at least 32 characters on every gateway copy (make one with `openssl rand -hex 32`)',
      ]);
      expect(problemsOf({ REDIS_URL: 'redis://redis:6379', LIVE_POLL_MS: '0' })).toEqual([]);
    });
  });

  describe('response cache', () => {
    it('is off unless CACHE_TTL_MS is set, and in memory unless REDIS_URL is', () => {
      expect(
        loadConfig({ REDIS_URL: 'redis://redis:6379', LIVE_POLL_MS: '0' }).responseCache.ttlMs,
      ).toBe(0);
      expect(loadConfig({ CACHE_TTL_MS: '0' }).responseCache.ttlMs).toBe(0);
      expect(loadConfig({ CACHE_TTL_MS: '5000' }).responseCache).toEqual({
        ttlMs: 5000,
        redisUrl: null,
        staleIfErrorMs: 0,
        maxBytes: 67_108_864,
        maxEntryBytes: 1_048_576,
      });
      expect(
        loadConfig({ CACHE_TTL_MS: '5000', REDIS_URL: 'rediss://r:6380', CACHE_HMAC_KEY: HMAC_KEY })
          .responseCache.redisUrl?.href,
      ).toBe('rediss://r:6380');
    });

    it('requires GATEWAY_SECRET with REDIS_URL, so copies sharing Redis fingerprint alike', () => {
      expect(problemsOf({ CACHE_TTL_MS: '5000', REDIS_URL: 'redis://redis:6379' })).toEqual([
        'GATEWAY_SECRET is required with REDIS_URL: the same secret of at least 32 characters on every gateway copy (make one with `openssl rand -hex 32`)',
      ]);
      // The former name still counts: it is an alias.
      expect(
        problemsOf({
          CACHE_TTL_MS: '5000',
          REDIS_URL: 'redis://redis:6379',
          CACHE_HMAC_KEY: HMAC_KEY,
        }),
      ).toEqual([]);
    });

    it('reports every bad cache value at once, without echoing the key or the URL', () => {
      const shortKey = 'short-S3CRET-key';
      const problems = problemsOf({
        CACHE_TTL_MS: '-5',
        REDIS_URL: 'http://:pw-S3CRET@redis:6379',
        CACHE_HMAC_KEY: shortKey,
      });
      expect(problems).toEqual([
        'CACHE_TTL_MS must be a whole number from 0 to 86400000 (got "-5")',
        'REDIS_URL must use redis or rediss (got http)',
        `CACHE_HMAC_KEY must be at least 32 characters (got ${shortKey.length})`,
      ]);
      expect(problems.join('\n')).not.toContain('S3CRET');
      expect(
        problemsOf({ CACHE_TTL_MS: '1', REDIS_URL: 'not a url', CACHE_HMAC_KEY: HMAC_KEY }),
      ).toEqual(['REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://redis:6379']);
      expect(problemsOf({ CACHE_TTL_MS: '86400001' })).toHaveLength(1);
    });

    it('reads the stale-if-error window and the memory bounds', () => {
      expect(
        loadConfig({
          CACHE_TTL_MS: '5000',
          CACHE_STALE_IF_ERROR_MS: '600000',
          CACHE_MAX_BYTES: '2000000',
        }).responseCache,
      ).toMatchObject({
        ttlMs: 5000,
        staleIfErrorMs: 600_000,
        maxBytes: 2_000_000,
        maxEntryBytes: 1_048_576,
      });
    });

    it('refuses bad stale-if-error and size values, each by name', () => {
      expect(
        problemsOf({
          CACHE_STALE_IF_ERROR_MS: '-1',
          CACHE_MAX_BYTES: '10',
        }),
      ).toEqual([
        'CACHE_STALE_IF_ERROR_MS must be a whole number from 0 to 604800000 (got "-1")',
        'CACHE_MAX_BYTES must be a whole number from 1048576 to 68719476736 (got "10")',
      ]);
      // A budget smaller than the largest answer stored (1 MiB, fixed) could hold none of them.
      expect(problemsOf({ CACHE_MAX_BYTES: '1000000' })).toEqual([
        'CACHE_MAX_BYTES must be a whole number from 1048576 to 68719476736 (got "1000000")',
      ]);
    });
  });

  describe('the reading of history_end', () => {
    it('is exclusive by default, demo mode included, where the simulator reads it so too', () => {
      expect(loadConfig({ UPSTREAM_URL: 'https://sms.example.com' }).upstream.historyEnd).toBe(
        'exclusive',
      );
      expect(loadConfig({}).upstream.historyEnd).toBe('exclusive');
      expect(loadConfig({}).simulatorHistoryEnd).toBe('exclusive');
      expect(loadConfig({ UPSTREAM_HISTORY_END: 'inclusive' }).upstream.historyEnd).toBe(
        'inclusive',
      );
    });

    it('refuses anything but exclusive or inclusive, naming the variable and the doctor', () => {
      expect(problemsOf({ UPSTREAM_HISTORY_END: 'closed' })).toEqual([
        'UPSTREAM_HISTORY_END must be exclusive or inclusive (got "closed"); `npm run doctor` tells which the service uses',
      ]);
    });
  });

  describe('the doctor (loadDoctorSettings)', () => {
    it('reads UPSTREAM_URL, SMS_SYS_ID and SMS_AUTH_TOKEN', () => {
      expect(
        loadDoctorSettings({
          UPSTREAM_URL: 'https://sms.example.com/v2',
          SMS_SYS_ID: 'AC-1',
          SMS_AUTH_TOKEN: 'secret-token-1',
        }),
      ).toEqual({
        url: new URL('https://sms.example.com/v2'),
        sysId: 'AC-1',
        authToken: 'secret-token-1',
        historyEnd: 'exclusive',
        timeoutMs: 10_000,
      });
    });

    it('says what is missing, without echoing a value', () => {
      let problems: readonly string[] = [];
      try {
        loadDoctorSettings({ SMS_AUTH_TOKEN: 'secret-token-2' });
      } catch (error) {
        if (error instanceof ConfigError) problems = error.problems;
      }
      expect(problems).toEqual([
        'UPSTREAM_URL is not set: the doctor asks the real service, at its base URL',
        "SMS_SYS_ID is not set: one account's sys_id",
      ]);
      expect(() =>
        loadDoctorSettings({ UPSTREAM_URL: 'ftp://x', SMS_SYS_ID: 'a', SMS_AUTH_TOKEN: 'b' }),
      ).toThrow(/UPSTREAM_URL must use http or https/);
    });
  });

  describe('variables it does not know', () => {
    it('names a miscased variable, and reports typos beside bad values, never their values', () => {
      expect(problemsOf({ upstream_url: 'https://x.example' })).toEqual([
        'upstream_url is not read (names are upper case): did you mean UPSTREAM_URL?',
      ]);
      // A port of ours misspelt is not mistaken for a Kubernetes service link (REDIS_PORT=tcp://…).
      expect(problemsOf({ METRIC_PORT: '9464' })).toEqual([
        'METRIC_PORT is not a setting of the gateway: did you mean METRICS_PORT?',
      ]);
      const problems = problemsOf({ PORT: 'x', CACHE_HMAC_KY: 'S3CRET-value' });
      expect(problems).toHaveLength(2);
      expect(problems[0]).toBe(
        'CACHE_HMAC_KY is not a setting of the gateway: did you mean CACHE_HMAC_KEY?',
      );
      expect(problems.join('\n')).not.toContain('S3CRET');
    });

    it('knows exactly the variables it reads (the list cannot drift from the code)', () => {
      const read = new Set<string>();
      const recording = new Proxy<Record<string, string | undefined>>(
        {},
        {
          get: (_target, name) => {
            if (typeof name === 'string') read.add(name);
            return undefined;
          },
        },
      );
      loadConfig(recording);
      expect([...read].sort()).toEqual([...CONFIG_VARIABLES].sort());
      read.clear();
      expect(() => loadDoctorSettings(recording)).toThrow(ConfigError);
      expect([...read].sort()).toEqual(
        [...CONFIG_VARIABLES, 'SMS_AUTH_TOKEN', 'SMS_SYS_ID'].sort(),
      );
    });
  });

  describe('former settings, now fixed values', () => {
    const DOC = 'docs/configuration.md#fixed-values';

    // 41: GRAPHIQL joined the 40 (production turns GraphiQL and introspection off; one switch on).
    // 42: METRICS_HOST (the unauthenticated metrics port on a private interface while HOST stays
    // public; no fixed value can say which interface a deployment's private network is).
    // 43: GATEWAY_PUBLIC_URL (the address the service reaches the gateway at, for the doorbell's
    // URLs; behind a balancer no copy can tell it).
    it('reads at most 43 variables, none of them a former setting', () => {
      expect(CONFIG_VARIABLES.length).toBeLessThanOrEqual(43);
      expect(CONFIG_VARIABLES.filter((name) => name in RETIRED_VARIABLES)).toEqual([]);
    });

    it('refuses every former setting, each in its own line beside other problems', () => {
      const names = Object.keys(RETIRED_VARIABLES);
      expect(names).toHaveLength(21);
      const problems = problemsOf({
        ...Object.fromEntries(names.map((name) => [name, '1'])),
        PORT: 'x',
      });
      expect(problems).toHaveLength(22);
      for (const name of names)
        expect(problems).toContain(
          `${name} is no longer a setting: it is fixed at ${RETIRED_VARIABLES[name]} (${DOC})`,
        );
    });

    it('fills the fields with the former defaults, unchanged', () => {
      const config = loadConfig({ UPSTREAM_TIMEOUT_MS: '4000' });
      expect(config.upstream).toMatchObject({
        attemptTimeoutMs: 4000,
        retries: 2,
        retryBaseDelayMs: 50,
        defaultRetryAfterMs: 5000,
        breakerThreshold: 5,
        breakerCooldownMs: 3000,
        accountSharePercent: 50,
        verifiedTtlMs: 300_000,
        refusedTtlMs: 60_000,
      });
      expect(config.limits).toMatchObject({
        maxTokens: 2000,
        maxDirectives: 20,
        maxUpstreamCalls: 250,
        maxNodeIds: 100,
      });
      expect(config.admission).toEqual({ minSeats: 2, maxWaiting: 100, maxWaitMs: 5000 });
      expect(config.heapGrowingPercent).toBe(50);
      expect(config.responseCache.maxEntryBytes).toBe(1_048_576);
      expect(config.live.maxPerConnection).toBe(20);
      expect(config.simulatorHistoryEnd).toBe('exclusive');
      expect(loadConfig({}).upstream.attemptTimeoutMs).toBe(10_000);
    });
  });

  describe('demo mode and production', () => {
    const REAL = 'https://sms.example.com';

    it('runs the simulator with a fixed demo secret when UPSTREAM_URL is unset (npm start)', () => {
      const config = loadConfig({});
      expect(config.upstream.url).toBeNull();
      expect(config.secret).toEqual({ current: DEMO_SECRET, previous: null, source: 'demo' });
      expect(loadConfig({ NODE_ENV: 'development' }).secret.current).toBe(DEMO_SECRET);
    });

    it('refuses production without UPSTREAM_URL, unless the simulator is asked for by name', () => {
      expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
        'UPSTREAM_URL is required with NODE_ENV=production (UPSTREAM_URL=simulator runs the built-in simulator on purpose)',
      ]);
      const asked = loadConfig({ NODE_ENV: 'production', UPSTREAM_URL: 'simulator' });
      expect(asked.upstream.url).toBeNull();
      expect(asked.secret.source).toBe('demo');
      expect(loadConfig({ UPSTREAM_URL: 'simulator' }).upstream.url).toBeNull();
    });

    it('never uses the demo secret with a real service: per process, or required in production', () => {
      expect(loadConfig({ UPSTREAM_URL: REAL }).secret).toEqual({
        current: null,
        previous: null,
        source: 'process',
      });
      expect(problemsOf({ NODE_ENV: 'production', UPSTREAM_URL: REAL })).toEqual([
        'GATEWAY_SECRET is required with NODE_ENV=production: the same secret of at least 32 characters on every copy, so cursors and resume tokens survive restarts (make one with `openssl rand -hex 32`)',
      ]);
      expect(
        loadConfig({ NODE_ENV: 'production', UPSTREAM_URL: REAL, GATEWAY_SECRET: HMAC_KEY }).secret
          .current,
      ).toBe(HMAC_KEY);
    });
  });

  describe('the secret', () => {
    it('reads CACHE_HMAC_KEY as an alias of GATEWAY_SECRET, and refuses the two differing', () => {
      expect(loadConfig({ CACHE_HMAC_KEY: HMAC_KEY }).secret).toEqual({
        current: HMAC_KEY,
        previous: null,
        source: 'configured',
      });
      expect(
        loadConfig({ CACHE_HMAC_KEY: HMAC_KEY, GATEWAY_SECRET: HMAC_KEY }).secret.current,
      ).toBe(HMAC_KEY);
      const problems = problemsOf({ CACHE_HMAC_KEY: HMAC_KEY, GATEWAY_SECRET: PREVIOUS_KEY });
      expect(problems).toEqual([
        'GATEWAY_SECRET and CACHE_HMAC_KEY (its former name) are both set and differ: set GATEWAY_SECRET alone',
      ]);
    });

    it('refuses short secrets and a previous one without a current one, echoing neither', () => {
      expect(
        problemsOf({ GATEWAY_SECRET: 'short-S3CRET', GATEWAY_SECRET_PREVIOUS: 'old-S3CRET' }),
      ).toEqual([
        'GATEWAY_SECRET must be at least 32 characters (got 12)',
        'GATEWAY_SECRET_PREVIOUS must be at least 32 characters (got 10)',
      ]);
      expect(problemsOf({ GATEWAY_SECRET_PREVIOUS: PREVIOUS_KEY })).toEqual([
        'GATEWAY_SECRET_PREVIOUS needs GATEWAY_SECRET: the key new tokens are signed with',
      ]);
    });
  });
});

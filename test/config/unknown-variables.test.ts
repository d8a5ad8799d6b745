/**
 * The names in the environment the gateway does not read (src/config/unknown-variables.ts): a
 * typo is told the setting it was meant for, a former setting the value it is fixed at, and what
 * other programs set is left alone.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config/config.js';
import { RETIRED_VARIABLES } from '../../src/config/settings.js';
import { GATEWAY_PREFIXES, unknownVariables } from '../../src/config/unknown-variables.js';

/** The problems found in `env`'s names, with the lists loadConfig gives. */
const problemsOf = (env: Record<string, string>): readonly string[] =>
  unknownVariables(env, CONFIG_VARIABLES, RETIRED_VARIABLES);

describe('variables it does not know', () => {
  it.each([
    ['UPSTREM_URL', 'UPSTREAM_URL'],
    ['REDIS_ULR', 'REDIS_URL'],
    ['LIVE_POL_MS', 'LIVE_POLL_MS'],
    ['MAX_QUERY_COSTS', 'MAX_QUERY_COST'],
    ['GATEWAY_SECRET_PREVIUOS', 'GATEWAY_SECRET_PREVIOUS'],
  ])('refuses %s: did you mean %s?', (typo, meant) => {
    expect(problemsOf({ [typo]: '1' })).toEqual([
      `${typo} is not a setting of the gateway: did you mean ${meant}?`,
    ]);
  });

  it('refuses any other name with a gateway prefix, listing the known ones', () => {
    const [problem, ...rest] = problemsOf({ SHUTDOWN_GRACE: '5' });
    expect(rest).toEqual([]);
    expect(problem).toBe(
      'SHUTDOWN_GRACE is not a setting of the gateway (it starts with SHUTDOWN_): known SHUTDOWN_ settings: SHUTDOWN_READINESS_DELAY_MS, SHUTDOWN_TIMEOUT_MS',
    );
  });

  it('leaves alone what the system, Node, OpenTelemetry, npm and Kubernetes service links set', () => {
    const others = {
      HOME: '/root',
      HOSTNAME: 'pod-7',
      PATH: '/bin',
      PWD: '/app',
      TERM: 'xterm',
      NODE_OPTIONS: '--enable-source-maps',
      NODE_EXTRA_CA_CERTS: '/ca.pem',
      OTEL_SERVICE_NAME: 'gateway',
      npm_config_cache: '/tmp/npm',
      REDIS_PORT: 'tcp://10.0.0.9:6379',
      REDIS_PORT_6379_TCP_ADDR: '10.0.0.9',
      REDIS_SERVICE_HOST: '10.0.0.9',
      GATEWAY_SERVICE_PORT_HTTP: '4000',
      GATEWAY_PORT_4000_TCP: 'tcp://10.0.0.8:4000',
    };
    expect(problemsOf(others)).toEqual([]);
  });
});

describe('former settings, now fixed values', () => {
  const DOC = 'docs/configuration.md#fixed-values';

  it.each([
    ['UPSTREAM_ATTEMPT_TIMEOUT_MS', 'the whole UPSTREAM_TIMEOUT_MS'],
    ['UPSTREAM_RETRIES', '2'],
    ['UPSTREAM_RETRY_BASE_MS', '50'],
    ['UPSTREAM_RETRY_AFTER_DEFAULT_MS', '5000'],
    ['UPSTREAM_BREAKER_THRESHOLD', '5'],
    ['UPSTREAM_BREAKER_COOLDOWN_MS', '3000'],
    ['UPSTREAM_ACCOUNT_SHARE_PERCENT', '50'],
    ['UPSTREAM_CONCURRENCY', 'none per request: the shared adaptive limit alone'],
    ['CREDENTIALS_VERIFIED_TTL_MS', '300000'],
    ['CREDENTIALS_REFUSED_TTL_MS', '60000'],
    ['ADMISSION_BUSY_CONCURRENCY', 'none per account: at least 2 seats in all'],
    ['ADMISSION_MAX_WAITING', '100'],
    ['ADMISSION_MAX_WAIT_MS', '5000'],
    ['HEAP_GROWING_PERCENT', '50'],
    ['CACHE_MAX_ENTRY_BYTES', '1048576'],
    ['LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION', '20'],
    ['MAX_TOKENS', '2000'],
    ['MAX_DIRECTIVES', '20'],
    ['MAX_UPSTREAM_CALLS', '250'],
    ['MAX_NODE_IDS', '100'],
    ['SIMULATOR_HISTORY_END', 'exclusive'],
  ])('refuses %s, saying it is fixed at %s', (name, value) => {
    expect(problemsOf({ [name]: '1' })).toEqual([
      `${name} is no longer a setting: it is fixed at ${value} (${DOC})`,
    ]);
  });

  it('names the former setting a typo was meant for, and its value', () => {
    expect(problemsOf({ MAX_TOKEN: '5000', HEAP_GROWING_PERCNT: '0' })).toEqual([
      `HEAP_GROWING_PERCNT is not a setting of the gateway, nor is HEAP_GROWING_PERCENT any longer: it is fixed at 50 (${DOC})`,
      `MAX_TOKEN is not a setting of the gateway, nor is MAX_TOKENS any longer: it is fixed at 2000 (${DOC})`,
    ]);
    // A name nearer one still read is taken for a typo of that one.
    expect(problemsOf({ MAX_DEPT: '5' })).toEqual([
      'MAX_DEPT is not a setting of the gateway: did you mean MAX_DEPTH?',
    ]);
  });

  it('keeps every prefix that marks a gateway variable in use by one read', () => {
    for (const prefix of GATEWAY_PREFIXES)
      expect(
        CONFIG_VARIABLES.some((name) => name.startsWith(prefix)),
        prefix,
      ).toBe(true);
  });
});

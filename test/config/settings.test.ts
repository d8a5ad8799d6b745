/** The settings table read directly; the rules between variables are config.test.ts's. */
import { describe, expect, it } from 'vitest';
import {
  CONFIG_VARIABLES,
  DOCTOR_SETTINGS,
  readSettings,
  SECTIONS,
  SETTINGS,
  SIMULATOR_UPSTREAM,
  type Env,
} from '../../src/config/settings.js';

function read(env: Env) {
  const problems: string[] = [];
  const values = readSettings(SETTINGS, env, problems);
  return { values, problems };
}

describe('readSettings', () => {
  it('reads an empty environment as the fallbacks, with no problem', () => {
    const { values, problems } = read({});
    expect(problems).toEqual([]);
    const fallbacks = Object.entries(SETTINGS).map(([name, setting]) => [name, setting.fallback]);
    expect(values).toEqual(Object.fromEntries(fallbacks));
    expect(values.PORT).toBe(4000);
    expect(values.LOG_LEVEL).toBe('info');
  });

  it('reads an empty or blank value as unset, and trims the others', () => {
    const { values, problems } = read({ PORT: '', HOST: '   ', MAX_DEPTH: ' 12 ' });
    expect(problems).toEqual([]);
    expect(values).toMatchObject({ PORT: 4000, HOST: '0.0.0.0', MAX_DEPTH: 12 });
  });

  it('takes a secret as given, spaces included', () => {
    const secret = ` ${'s'.repeat(40)} `;
    const { values, problems } = read({ GATEWAY_SECRET: secret });
    expect(problems).toEqual([]);
    expect(values.GATEWAY_SECRET).toBe(secret);
  });

  it('reports every bad value at once, each by name, and reads it as its fallback', () => {
    const { values, problems } = read({
      PORT: '70000',
      MAX_DEPTH: '1e3',
      LOG_LEVEL: 'loud',
      METRICS: 'maybe',
      MAX_ALIASES: '40',
    });
    expect(problems).toEqual([
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      'PORT must be a whole number from 0 to 65535 (got "70000")',
      'MAX_DEPTH must be a whole number from 1 to 1000 (got "1e3")',
      'METRICS must be on or off (got "maybe")',
    ]);
    expect(values).toMatchObject({
      PORT: 4000,
      MAX_DEPTH: 10,
      LOG_LEVEL: 'info',
      METRICS: true,
      MAX_ALIASES: 40,
    });
  });

  it('never echoes a secret that is too short, only its length', () => {
    const { problems } = read({ GATEWAY_SECRET: 'short-secret' });
    expect(problems).toEqual(['GATEWAY_SECRET must be at least 32 characters (got 12)']);
  });
});

describe('the kinds of value', () => {
  it('a whole number with 0 for off: 0, or the range', () => {
    expect(read({ LIVE_POLL_MS: '0' }).values.LIVE_POLL_MS).toBe(0);
    expect(read({ LIVE_POLL_MS: '250' }).values.LIVE_POLL_MS).toBe(250);
    expect(read({ LIVE_POLL_MS: '50' }).problems).toEqual([
      'LIVE_POLL_MS must be 0 (off) or a whole number from 100 to 3600000 (got "50")',
    ]);
  });

  it('a choice in any case, with its hint', () => {
    expect(read({ UPSTREAM_HISTORY_END: 'Inclusive' }).values.UPSTREAM_HISTORY_END).toBe(
      'inclusive',
    );
    expect(read({ UPSTREAM_HISTORY_END: 'both' }).problems).toEqual([
      'UPSTREAM_HISTORY_END must be exclusive or inclusive (got "both"); `npm run doctor` tells which the service uses',
    ]);
  });

  it('on/off in its three spellings each', () => {
    for (const on of ['on', 'TRUE', '1']) expect(read({ GRAPHIQL: on }).values.GRAPHIQL).toBe(true);
    for (const off of ['Off', 'false', '0'])
      expect(read({ GRAPHIQL: off }).values.GRAPHIQL).toBe(false);
    expect(read({}).values.GRAPHIQL).toBeNull();
  });

  it('a list of host:port, IPv6 in brackets, skipping empty items and refusing the rest', () => {
    const { values, problems } = read({
      REDIS_SENTINELS: '[::1]:26379, sentinel-2:26380,,sentinel-3',
    });
    expect(values.REDIS_SENTINELS).toEqual([
      { host: '::1', port: 26379 },
      { host: 'sentinel-2', port: 26380 },
    ]);
    expect(problems).toEqual([
      'REDIS_SENTINELS: "sentinel-3" is not host:port (e.g. redis-1:6379)',
    ]);
  });

  it('origins: "*" only alone, "null" by name', () => {
    expect(read({ CORS_ORIGINS: '*' }).values.CORS_ORIGINS).toEqual(['*']);
    expect(read({ CORS_ORIGINS: 'null, https://app.example.com' }).problems).toEqual([]);
    expect(read({ CORS_ORIGINS: '*, https://app.example.com' }).problems).toEqual([
      'CORS_ORIGINS: "*" is not an origin like https://app.example.com (or use "*" alone)',
    ]);
  });

  it("the service's URL: unset, the simulator by name, or an http(s) URL without credentials", () => {
    expect(read({}).values.UPSTREAM_URL).toBeUndefined();
    expect(read({ UPSTREAM_URL: SIMULATOR_UPSTREAM }).values.UPSTREAM_URL).toBeNull();
    expect(String(read({ UPSTREAM_URL: 'https://sms.example.com/v2' }).values.UPSTREAM_URL)).toBe(
      'https://sms.example.com/v2',
    );
    const withPassword = read({ UPSTREAM_URL: 'https://user:hunter2@sms.example.com' });
    expect(withPassword.values.UPSTREAM_URL).toBeNull();
    expect(withPassword.problems).toEqual([
      'UPSTREAM_URL must not contain credentials; clients send them per request',
    ]);
    expect(read({ REDIS_URL: 'http://redis:6379' }).problems).toEqual([
      'REDIS_URL must use redis or rediss (got http)',
    ]);
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).problems).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL, e.g. http://otel-collector:4318',
    ]);
  });
});

describe('the table', () => {
  it("lists every variable in one section of docs/configuration.md, the doctor's apart", () => {
    const inSections = Object.values(SECTIONS).flatMap((section) => Object.keys(section));
    expect(new Set(inSections).size).toBe(inSections.length);
    expect(inSections.sort()).toEqual(
      [...CONFIG_VARIABLES, ...Object.keys(DOCTOR_SETTINGS)].sort(),
    );
    expect(CONFIG_VARIABLES).not.toContain('SMS_AUTH_TOKEN');
  });

  it('gives every row a Meaning and a Default', () => {
    for (const [name, setting] of Object.entries({ ...SETTINGS, ...DOCTOR_SETTINGS })) {
      expect(setting.doc, name).not.toBe('');
      expect(setting.shown, name).not.toBe('');
    }
    expect(SETTINGS.PORT.shown).toBe('`4000`');
    expect(SETTINGS.METRICS.shown).toBe('`on`');
    expect(SETTINGS.REDIS_URL.shown).toBe('unset');
  });
});

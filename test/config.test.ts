import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      port: 4000,
      host: '0.0.0.0',
      upstreamUrl: null,
      upstreamTimeoutMs: 10_000,
      upstreamConcurrency: 16,
      maxHistoryRange: 1000,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      UPSTREAM_URL: 'https://sms.example.com/v2/',
      UPSTREAM_TIMEOUT_MS: '2500',
      UPSTREAM_CONNECTIONS: '10',
      UPSTREAM_CONCURRENCY: '4',
      MAX_HISTORY_RANGE: '200',
      SIMULATOR_LATENCY_MS: '20',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      upstreamTimeoutMs: 2500,
      upstreamConnections: 10,
      upstreamConcurrency: 4,
      maxHistoryRange: 200,
      simulatorLatencyMs: 20,
    });
    expect(config.upstreamUrl?.href).toBe('https://sms.example.com/v2/');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reports every bad value at once, each by name', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        UPSTREAM_TIMEOUT_MS: '0',
        UPSTREAM_URL: 'ftp://x',
        UPSTREAM_CONCURRENCY: '-1',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(
      /PORT[\s\S]*UPSTREAM_URL[\s\S]*UPSTREAM_TIMEOUT_MS[\s\S]*UPSTREAM_CONCURRENCY/,
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
});

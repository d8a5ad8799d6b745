/** CORS only for configured frontend origins. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { banner } from '../../src/http/banner.js';
import { corsRefusesAll, corsSummary } from '../../src/http/cors.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createTestGateway } from '../fixtures/harness.js';

let simulator: RunningSimulator;
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(() => simulator.close());

const preflight = (origin: string) => ({
  method: 'OPTIONS',
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization, content-type',
  },
});

describe('CORS', () => {
  it('allows a configured origin, with the credential headers, and exposes x-request-id', async () => {
    const test = createTestGateway(simulator.url, { corsOrigins: ['https://app.example.com'] });
    try {
      const response = await test.gateway.fetch(
        'http://gateway.test/graphql',
        preflight('https://app.example.com'),
      );
      expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(response.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      expect(response.headers.get('access-control-allow-headers')).toMatch(/x-auth-token/);
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
      const actual = await test.gateway.fetch(
        'http://gateway.test/graphql?query=%7B__typename%7D',
        {
          headers: { origin: 'https://app.example.com', accept: 'application/json' },
        },
      );
      expect(actual.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
    } finally {
      await test.close();
    }
  });

  it('gives other origins no CORS grant', async () => {
    const test = createTestGateway(simulator.url, { corsOrigins: ['https://app.example.com'] });
    try {
      const response = await test.gateway.fetch(
        'http://gateway.test/graphql',
        preflight('https://evil.example.net'),
      );
      expect(response.headers.get('access-control-allow-origin')).not.toBe(
        'https://evil.example.net',
      );
    } finally {
      await test.close();
    }
  });

  it('grants no origin when none is configured', async () => {
    const test = createTestGateway(simulator.url);
    try {
      const response = await test.gateway.fetch(
        'http://gateway.test/graphql',
        preflight('https://app.example.com'),
      );
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await test.close();
    }
  });

  it('in demo mode, allows pages on loopback (a Vite or Next dev server) and nothing else', async () => {
    const test = createTestGateway(simulator.url, { allowLoopbackOrigins: true });
    try {
      for (const origin of [
        'http://localhost:5173',
        'http://127.0.0.1:3000',
        'http://[::1]:8080',
      ]) {
        const response = await test.gateway.fetch('http://gateway.test/graphql', preflight(origin));
        expect(response.headers.get('access-control-allow-origin')).toBe(origin);
        expect(response.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      }
      for (const origin of [
        'https://app.example.com',
        'http://localhost.evil.example',
        'http://127.0.0.1.evil.example',
      ]) {
        const response = await test.gateway.fetch('http://gateway.test/graphql', preflight(origin));
        expect(response.headers.get('access-control-allow-origin')).toBeNull();
      }
    } finally {
      await test.close();
    }
  });

  it('configured origins replace the loopback default of demo mode', async () => {
    const test = createTestGateway(simulator.url, {
      allowLoopbackOrigins: true,
      corsOrigins: ['https://app.example.com'],
    });
    try {
      const response = await test.gateway.fetch(
        'http://gateway.test/graphql',
        preflight('http://localhost:5173'),
      );
      expect(response.headers.get('access-control-allow-origin')).not.toBe('http://localhost:5173');
    } finally {
      await test.close();
    }
  });

  it('refuses a preflight from an origin not allowed with 403 and how to allow it, never 405', async () => {
    for (const options of [{}, { corsOrigins: ['https://app.example.com'] }]) {
      const test = createTestGateway(simulator.url, options);
      try {
        const response = await test.gateway.fetch(
          'http://gateway.test/graphql',
          preflight('https://other.example.net'),
        );
        expect(response.status).toBe(403);
        expect(response.headers.get('vary')).toMatch(/Origin/);
        expect(response.headers.get('access-control-allow-origin')).toBeNull();
        const body = (await response.json()) as { errors: { message: string }[] };
        expect(body.errors[0]?.message).toBe(
          'CORS: pages from https://other.example.net may not call this gateway. Its operator can allow them with CORS_ORIGINS=https://other.example.net (comma-separated list of origins).',
        );
      } finally {
        await test.close();
      }
    }
  });

  it('sends Vary: Origin on every answer whose CORS headers depend on the origin', async () => {
    for (const options of [
      { corsOrigins: ['https://app.example.com', 'https://admin.example.com'] },
      { corsOrigins: ['*'] },
      { allowLoopbackOrigins: true },
    ]) {
      const test = createTestGateway(simulator.url, options);
      try {
        for (const origin of [
          'https://app.example.com',
          'http://localhost:5173',
          'https://x.example',
        ]) {
          const answer = await test.gateway.fetch(
            'http://gateway.test/graphql?query=%7B__typename%7D',
            {
              headers: { origin, accept: 'application/json' },
            },
          );
          expect(answer.headers.get('vary') ?? '').toMatch(/\bOrigin\b/);
          const allowed = answer.headers.get('access-control-allow-origin');
          expect(allowed === null || allowed === origin).toBe(true);
          const check = await test.gateway.fetch('http://gateway.test/graphql', preflight(origin));
          expect(check.headers.get('vary') ?? '').toMatch(/\bOrigin\b/);
        }
      } finally {
        await test.close();
      }
    }
  });

  it('refuses Origin: null, even with *, unless CORS_ORIGINS lists null', async () => {
    for (const [origins, allowed] of [
      [['https://app.example.com', 'https://admin.example.com'], false],
      [['*'], false],
      [['null'], true],
    ] as const) {
      const test = createTestGateway(simulator.url, { corsOrigins: origins });
      try {
        const response = await test.gateway.fetch('http://gateway.test/graphql', preflight('null'));
        expect(response.status).toBe(allowed ? 204 : 403);
        expect(response.headers.get('access-control-allow-origin')).toBe(allowed ? 'null' : null);
      } finally {
        await test.close();
      }
    }
    expect(loadConfig({ CORS_ORIGINS: 'null, https://app.example.com' }).corsOrigins).toEqual([
      'null',
      'https://app.example.com',
    ]);
  });

  it('says at start-up who may call from a browser, and how to allow a page', () => {
    const none = { origins: [], allowLoopback: false };
    expect(corsSummary(none)).toBe(
      'Browsers: every page will be refused (no CORS_ORIGINS); to allow yours, set CORS_ORIGINS=https://app.example.com (comma-separated, or * for any)',
    );
    expect(corsRefusesAll(none)).toBe(true);
    expect(corsSummary({ origins: [], allowLoopback: true })).toMatch(
      /^Browsers: pages on localhost may call \(demo mode\); for others set CORS_ORIGINS=/,
    );
    expect(corsSummary({ origins: ['https://a.example'], allowLoopback: true })).toBe(
      'Browsers: pages from https://a.example may call; others are refused (CORS_ORIGINS)',
    );
    const facts = { graphiql: true, build: { version: '1.0.0', commit: 'c', builtAt: 'b' } };
    const real = banner(
      'http://localhost:4000/graphql',
      { origin: 'https://sms.example.com' },
      none,
      facts,
    );
    expect(real.split('\n')).toEqual([
      'SMS GraphQL gateway on http://localhost:4000/graphql (GraphiQL: open it in a browser)',
      'Version 1.0.0, commit c, built b',
      corsSummary(none),
      'Upstream: https://sms.example.com',
    ]);
    const demo = banner(
      'http://localhost:4000/graphql',
      { simulatorUrl: 'http://127.0.0.1:1' },
      {
        origins: [],
        allowLoopback: true,
      },
      facts,
    );
    expect(demo).toContain(corsSummary({ origins: [], allowLoopback: true }));
  });
});

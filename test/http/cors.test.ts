/** CORS only for configured frontend origins. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('sends no CORS headers at all when no origin is configured', async () => {
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
});

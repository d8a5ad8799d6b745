/** /readiness (src/http/readiness.ts): 200 while the copy takes work, 503 with why once it drains. */
import { describe, expect, it } from 'vitest';
import { readinessReport } from '../../src/http/readiness.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';

const stacks = scriptedStacks();

describe('readinessReport', () => {
  it('says ready until the drain, names the copy, demo mode and each Redis use', () => {
    let draining = false;
    const report = readinessReport({
      draining: () => draining,
      instanceId: 'copy-1',
      simulator: true,
      redis: { cache: { up: true }, live: { up: false } },
    });
    expect(report()).toEqual({
      ready: true,
      status: 'ready',
      instance: 'copy-1',
      upstream: 'simulator',
      redis: { cache: 'up', live: 'down' },
    });
    draining = true;
    expect(report()).toMatchObject({ ready: false, status: 'draining' });
  });

  it('leaves out what the copy does not use', () => {
    const report = readinessReport({
      draining: () => false,
      instanceId: 'copy-2',
      simulator: false,
      redis: {},
    });
    expect(report()).toEqual({ ready: true, status: 'ready', instance: 'copy-2' });
  });
});

describe('/readiness', () => {
  it('reports not ready (503) while draining, and alive all the same', async () => {
    const stack = await stacks.start(() => ({ json: {} }));
    const { gateway } = stack;
    expect((await gateway.fetch('http://gateway.test/readiness')).status).toBe(200);
    stack.test.app.connections.closeAfterEachResponse();
    const draining = await gateway.fetch('http://gateway.test/readiness?probe=balancer');
    expect(draining.status).toBe(503);
    expect(draining.headers.get('cache-control')).toBe('no-store');
    expect(await draining.json()).toMatchObject({ ready: false, status: 'draining' });
    expect((await gateway.fetch('http://gateway.test/health')).status).toBe(200);
    // Only the path itself: a query naming it is a GraphQL request like any other.
    const named = await gateway.fetch(
      'http://gateway.test/graphql?query={__typename}&x=/readiness',
    );
    expect(named.status).not.toBe(503);
  });
});

/**
 * The per-request context against the simulator: a request without usable credentials is refused
 * (UNAUTHENTICATED, saying what to send) before any call; one request's reads share one set of
 * loaders, bounded by maxUpstreamCalls, and the next request gets its own.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type GatewayLimits } from '../../src/config/config.js';
import { Identities } from '../../src/core/identity.js';
import { createContext, type ContextDependencies } from '../../src/graph/context.js';
import { createCursorCodec } from '../../src/graph/cursors.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth } from '../fixtures/harness.js';
import { directOverSimulator } from '../fixtures/upstream-client.js';

const identities = new Identities(null);
const demo = identities.fromHeaders(new Headers(basicAuth(DEMO_CREDENTIALS)));

const over = directOverSimulator();

const deps = (limits: Partial<GatewayLimits> = {}): ContextDependencies => ({
  client: over.direct.client,
  limits: { ...DEFAULT_LIMITS, ...limits },
  cursors: createCursorCodec(null),
});

describe('createContext', () => {
  it('refuses a request without credentials, saying what to send, before any call', () => {
    const context = createContext(identities.fromHeaders(new Headers()), deps());
    expect(() => context.upstream()).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/^Credentials required: send "Authorization: Basic/),
        extensions: { code: 'UNAUTHENTICATED' },
      }),
    );
    expect(() => context.account()).toThrow(/Credentials required/);
    expect(over.upstream.calls).toEqual([]);
  });

  it('refuses malformed credentials, saying why', () => {
    const identity = identities.fromHeaders(new Headers({ authorization: 'Basic !!!' }));
    expect(identity.kind).toBe('malformed');
    const context = createContext(identity, deps());
    expect(() => context.upstream()).toThrow(/^Malformed credentials: /);
    expect(over.upstream.calls).toEqual([]);
  });

  it("shares one request's loaders, so its identical reads are one call", async () => {
    const context = createContext(demo, deps());
    expect(context.upstream()).toBe(context.upstream());
    expect(context.account().loaders).toBe(context.upstream());
    expect(context.account().credentials.sysId).toBe(DEMO_CREDENTIALS.sysId);
    const [a, b] = await Promise.all([
      context.upstream().ownedNumbers(),
      context.upstream().ownedNumbers(),
    ]);
    expect(a.map((n) => n.tid)).toEqual(DEMO_ACCOUNT.numbers.map((n) => n.tid));
    expect(b).toEqual(a);
    expect(over.upstream.calls.map((c) => c.operation)).toEqual(['allownednumbers']);
  });

  it('gives the next request loaders of its own: nothing read is shared across requests', async () => {
    const first = createContext(demo, deps());
    const second = createContext(demo, deps());
    expect(second.upstream()).not.toBe(first.upstream());
    await first.upstream().ownedNumbers();
    await second.upstream().ownedNumbers();
    expect(over.upstream.calls).toHaveLength(2);
  });

  it("bounds a request's calls by maxUpstreamCalls", async () => {
    const context = createContext(demo, deps({ maxUpstreamCalls: 1 }));
    const [number] = DEMO_ACCOUNT.numbers;
    await context.upstream().ownedNumbers();
    await expect(
      context.upstream().history({ tid: number!.tid, number: number!.number, start: 0, end: 1 }),
    ).rejects.toMatchObject({ code: 'UPSTREAM_CALL_LIMIT' });
    expect(over.upstream.calls).toHaveLength(1);
  });

  it("carries the request's caller to its calls: its ticket's identity, named once, and its bill", async () => {
    const made: unknown[] = [];
    const bill = (): void => undefined;
    const client: ContextDependencies['client'] = {
      ...over.direct.client,
      callerOf: (identity) => ({ identity, bill }),
      allOwnedNumbers: (credentials, options) => {
        made.push(options?.caller);
        return over.direct.client.allOwnedNumbers(credentials, options);
      },
    };
    await createContext(demo, { ...deps(), client })
      .upstream()
      .ownedNumbers();
    expect(made).toEqual([{ identity: demo, bill }]);
    expect((made[0] as { identity: unknown }).identity).toBe(demo);
  });

  it('carries the limits, the cursor codec, no live hub by default, and a response budget', () => {
    const dependencies = deps({ maxResponseBytes: 2_048 });
    const context = createContext(demo, dependencies);
    expect(context.limits.maxResponseBytes).toBe(2_048);
    expect(context.cursors).toBe(dependencies.cursors);
    expect(context.live).toBeNull();
    expect(context.responseBudget).toBeDefined();
    expect(createContext(demo, dependencies).responseBudget).not.toBe(context.responseBudget);
  });
});

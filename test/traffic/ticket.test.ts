import { describe, expect, it } from 'vitest';
import { Identities } from '../../src/core/identity.js';
import { issueTicket, nodeHeaders, ticketOf } from '../../src/traffic/ticket.js';

const identities = new Identities('a-secret-of-thirty-two-characters!');
const BASIC = `Basic ${btoa('AC-ticket:token-1')}`;

describe('issueTicket', () => {
  it("reads Fetch's and Node's headers alike: the same identity for the same credentials", () => {
    const fromFetch = issueTicket(identities, new Headers({ authorization: BASIC }));
    // Node lower-cases names and may join repeated ones into an array.
    const fromNode = issueTicket(identities, { authorization: BASIC, host: 'gateway' });
    expect(fromFetch.identity).toMatchObject({
      kind: 'present',
      credentials: { sysId: 'AC-ticket' },
    });
    expect(fromNode.identity).toBe(fromFetch.identity);
  });

  it('tells missing from malformed credentials, and never echoes them', () => {
    expect(issueTicket(identities, { host: 'gateway' }).identity).toEqual({ kind: 'missing' });
    const malformed = issueTicket(identities, { 'x-sys-id': 'AC-ticket' }).identity;
    expect(malformed).toMatchObject({ kind: 'malformed' });
    expect(JSON.stringify(malformed)).not.toContain('AC-ticket');
  });

  it('stamps its arrival and starts with no wait and no refusal', () => {
    const before = performance.now();
    const ticket = issueTicket(identities, new Headers());
    expect(ticket.arrivedAt).toBeGreaterThanOrEqual(before);
    expect(ticket.arrivedAt).toBeLessThanOrEqual(performance.now());
    expect(ticket).toMatchObject({ waitedMs: 0 });
    expect(ticket.refusal).toBeUndefined();
  });
});

describe('ticketOf', () => {
  it('reads the ticket a server context carries', () => {
    const ticket = issueTicket(identities, new Headers({ authorization: BASIC }));
    expect(ticketOf({ ticket, req: {} })).toBe(ticket);
  });

  it('reads a context without one as a caller without credentials: it reaches nothing', () => {
    for (const context of [{}, undefined, null]) {
      expect(ticketOf(context).identity).toEqual({ kind: 'missing' });
    }
  });
});

describe('nodeHeaders', () => {
  it("reads Node's headers as a Fetch Headers is read: get, has, and the names keys() lists", () => {
    const node = { traceparent: '00-a-b-01', 'x-list': ['a/b', 'c/d'], host: 'gateway' };
    const fetched = new Headers([
      ['traceparent', '00-a-b-01'],
      ['x-list', 'a/b'],
      ['x-list', 'c/d'],
      ['host', 'gateway'],
    ]);
    const view = nodeHeaders(node);
    for (const name of ['traceparent', 'x-list', 'host', 'tracestate']) {
      expect([view.get(name), view.has(name)]).toEqual([fetched.get(name), fetched.has(name)]);
    }
    // OpenTelemetry's getter lists the names (the lane's request is read by tracing).
    expect([...view.keys()].sort()).toEqual([...fetched.keys()].sort());
  });
});

/**
 * End to end through a real federation router: the simulator, this gateway served over HTTP, the
 * contacts subgraph and a Hive Gateway router over their composed supergraph, all on 127.0.0.1.
 * The router forwards the client's credential headers to this subgraph only (README, "Use as a
 * subgraph"). Supergraph queries are not in this schema's typed set, so they are sent as text.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { estimateCost } from '../../src/graph/estimate-cost.js';
import { schema } from '../../src/graph/schema.js';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  SECOND_DEMO_ACCOUNT,
  SECOND_DEMO_CREDENTIALS,
} from '../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import {
  CONTACTS,
  CREDENTIAL_HEADERS,
  composeWithContacts,
  listenOnLoopback,
  startContactsSubgraph,
  startRouter,
  type RunningContactsSubgraph,
  type RunningHttpServer,
  type RunningRouter,
} from '../fixtures/federation.js';
import { basicAuth, createTestGateway, pairAuth, type TestGateway } from '../fixtures/harness.js';

let simulator: RecordingUpstream;
let gateway: TestGateway;
let sms: RunningHttpServer;
let contacts: RunningContactsSubgraph;
let router: RunningRouter;
let supergraph: string;
/** Headers of every request that reached this gateway over HTTP. */
const smsRequests: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  simulator = await startRecordingUpstream();
  gateway = createTestGateway(simulator.url);
  sms = await listenOnLoopback((req, res) => {
    smsRequests.push(req.headers);
    void gateway.gateway(req, res);
  });
  contacts = await startContactsSubgraph();
  const composed = await composeWithContacts({ sms: sms.url, contacts: contacts.url });
  if (!composed.supergraphSdl) {
    throw new Error(`composition failed: ${composed.errors?.map((e) => e.message).join('; ')}`);
  }
  supergraph = composed.supergraphSdl;
  router = await startRouter(supergraph);
});

afterAll(async () => {
  // Each guarded, so a failed start-up still closes whatever did start.
  await router?.close();
  await contacts?.close();
  await sms?.close();
  await gateway?.close();
  await simulator?.close();
});

beforeEach(() => {
  simulator.resetCalls();
  smsRequests.length = 0;
  contacts.requestHeaders.length = 0;
});

interface RouterResponse<TData> {
  readonly data?: TData | null;
  readonly errors?: readonly RouterError[];
}

interface RouterError {
  readonly message: string;
  readonly path?: readonly (string | number)[];
  readonly extensions?: { readonly code?: string; readonly serviceName?: string };
}

async function queryRouter<TData>(
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: RouterResponse<TData> }> {
  const response = await fetch(router.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: (await response.json()) as RouterResponse<TData> };
}

const upstreamCalls = () =>
  simulator.calls.map((c) => ({ operation: c.operation, account: c.accountSysId }));

const demoNumber = (tid: string) => {
  const n = DEMO_ACCOUNT.numbers.find((o) => o.tid === tid);
  if (!n) throw new Error(`no demo number ${tid}`);
  return { tid, number: n.number, type: n.type.toUpperCase() };
};

const CONTACTS_WITH_NUMBERS = '{ contacts { name number { tid number type } } }';

describe('through a federation router', () => {
  it('a query across both subgraphs reaches this gateway with the Authorization header', async () => {
    const auth = basicAuth(DEMO_CREDENTIALS);
    const { status, body } = await queryRouter(CONTACTS_WITH_NUMBERS, auth);

    expect(status).toBe(200);
    expect(body).toEqual({
      data: {
        contacts: CONTACTS.map((c) => ({ name: c.name, number: demoNumber(c.tid) })),
      },
    });
    // Three references, one `_entities` request to this gateway, one upstream call.
    expect(upstreamCalls()).toEqual([
      { operation: 'allownednumbers', account: DEMO_CREDENTIALS.sysId },
    ]);
    expect(smsRequests.map((h) => h.authorization)).toEqual([auth.authorization]);
    // The credential goes to this subgraph only.
    expect(contacts.requestHeaders).toHaveLength(1);
    for (const headers of contacts.requestHeaders) {
      for (const name of CREDENTIAL_HEADERS) expect(headers.get(name)).toBeNull();
    }
  });

  it('the other direction: this subgraph first, then contacts; X-Sys-Id/X-Auth-Token forwarded', async () => {
    const auth = pairAuth(DEMO_CREDENTIALS);
    const { body } = await queryRouter(
      '{ ownedNumbers(type: LOCAL) { tid number contacts { name } } }',
      auth,
    );

    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      ownedNumbers: DEMO_ACCOUNT.numbers
        .filter((n) => n.type === 'local')
        .map((n) => ({
          tid: n.tid,
          number: n.number,
          contacts: CONTACTS.filter((c) => c.tid === n.tid).map((c) => ({ name: c.name })),
        })),
    });
    expect(simulator.calls.map((c) => [c.operation, c.accountSysId, c.params.number_type])).toEqual(
      [['ownednumbers', DEMO_CREDENTIALS.sysId, 'local']],
    );
    expect(smsRequests.map((h) => [h['x-sys-id'], h['x-auth-token']])).toEqual([
      [auth['x-sys-id'], auth['x-auth-token']],
    ]);
  });

  it("uses each request's own credentials", async () => {
    const { body } = await queryRouter(
      '{ ownedNumbers { tid contacts { name } } }',
      basicAuth(SECOND_DEMO_CREDENTIALS),
    );

    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      ownedNumbers: SECOND_DEMO_ACCOUNT.numbers.map((n) => ({ tid: n.tid, contacts: [] })),
    });
    expect(upstreamCalls()).toEqual([
      { operation: 'allownednumbers', account: SECOND_DEMO_CREDENTIALS.sysId },
    ]);
  });

  it('without the header: UNAUTHENTICATED from this subgraph, the rest intact, no upstream call', async () => {
    const { status, body } = await queryRouter(CONTACTS_WITH_NUMBERS);

    expect(status).toBe(200);
    expect(body.data).toEqual({
      contacts: CONTACTS.map((c) => ({ name: c.name, number: null })),
    });
    const errors = (body.errors ?? [])
      .map((e) => ({
        path: e.path?.slice(0, 3),
        code: e.extensions?.code,
        serviceName: e.extensions?.serviceName,
        message: e.message,
      }))
      .sort((a, b) => String(a.path).localeCompare(String(b.path)));
    expect(errors).toEqual(
      CONTACTS.map((_, i) => ({
        path: ['contacts', i, 'number'],
        code: 'UNAUTHENTICATED',
        serviceName: 'sms',
        message: expect.stringMatching(/^Credentials required/) as unknown,
      })),
    );
    expect(smsRequests.map((h) => h.authorization)).toEqual([undefined]);
    expect(simulator.calls).toEqual([]);
  });

  it('without the header, a root field of this subgraph is null with UNAUTHENTICATED', async () => {
    const { body } = await queryRouter('{ ownedNumbers { tid } }');

    expect(body.data).toEqual({ ownedNumbers: null });
    expect(body.errors?.map((e) => ({ path: e.path, code: e.extensions?.code }))).toEqual([
      { path: ['ownedNumbers'], code: 'UNAUTHENTICATED' },
    ]);
    expect(simulator.calls).toEqual([]);
  });
});

describe('demand control in the router', () => {
  it('reads the list sizes the gateway estimates from: the same cost, or a higher one where only the gateway can count', async () => {
    const measuring = await startRouter(supergraph, {
      maxCost: 1_000_000_000,
      includeExtensionMetadata: true,
    });
    try {
      const routerCost = async (query: string) => {
        const response = await fetch(measuring.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
          body: JSON.stringify({ query }),
        });
        const body = (await response.json()) as { extensions?: { cost?: { estimated?: number } } };
        return body.extensions?.cost?.estimated;
      };
      const gatewayCost = (query: string) => estimateCost({ schema, document: parse(query) }).cost;
      for (const [query, router, gateway] of [
        // Stated by the directives alone: the two agree.
        [
          '{ ownedNumbers { tid history(start: 0, end: 5) { messages { id status { ok } } } } }',
          2_400,
          2_400,
        ],
        ['{ number(tid: "TN-L-0001") { messages(first: 7) { edges { node { id } } } } }', 16, 16],
        // A range not from 0: the router slices by `end` alone.
        ['{ number(tid: "TN-L-0001") { history(start: 10, end: 15) { messages { id } } } }', 17, 7],
        // A list argument: the router assumes 100 ids, the gateway counts them.
        ['{ nodes(ids: ["a"]) { id } }', 100, 1],
      ] as const) {
        expect({ query, router: await routerCost(query) }).toEqual({ query, router });
        expect({ query, gateway: gatewayCost(query) }).toEqual({ query, gateway });
      }
    } finally {
      await measuring.close();
    }
  });
});

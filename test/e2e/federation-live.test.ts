/**
 * Live updates through a federation router: the gateway on a real port (live updates on, the
 * simulator behind it), the contacts subgraph and a Hive Gateway router over their composed
 * supergraph, all on 127.0.0.1. A client subscribes to the router over SSE, the connection drops,
 * messages arrive meanwhile, and the client resumes with the field-level
 * `messageEdgeAdded.resumeToken` (docs/federation.md, "Live updates through a router"), with the
 * document that page shows: `extensions.resumeToken` and the SSE `id:` never reach the client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../src/http/server.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { until } from '../../support/wait.js';
import { serveGateway, type ServedGateway } from '../clients/served-gateway.js';
import { snippets } from '../docs/snippets.js';
import {
  composeWithContacts,
  startContactsSubgraph,
  startRouter,
  type RunningContactsSubgraph,
  type RunningRouter,
} from '../fixtures/federation.js';
import { basicAuth } from '../fixtures/harness.js';
import { subscribeSse, type SseStream } from '../fixtures/sse.js';

let sms: ServedGateway;
let contacts: RunningContactsSubgraph;
let router: RunningRouter;

beforeAll(async () => {
  sms = await serveGateway();
  contacts = await startContactsSubgraph();
  const composed = await composeWithContacts({
    sms: `${sms.origin}/graphql`,
    contacts: contacts.url,
  });
  if (!composed.supergraphSdl) {
    throw new Error(`composition failed: ${composed.errors?.map((e) => e.message).join('; ')}`);
  }
  router = await startRouter(composed.supergraphSdl);
});

afterAll(async () => {
  // Each guarded, so a failed start-up still closes whatever did start.
  await router?.close();
  await contacts?.close();
  await sms?.close();
});

const NUMBER = DEMO_ACCOUNT.numbers[0]!;

/** The subscription docs/federation.md shows for resuming behind a router, as it stands. */
const EDGES = snippets('docs/federation.md').get('router-resume')?.code ?? '';

interface EdgeEvent {
  readonly resumeToken: string;
  readonly edge: {
    readonly cursor: string;
    readonly node: { readonly id: string; readonly body: string };
  };
}

/** SSE to the router over real HTTP (the fixture reads any fetch-shaped server). */
const viaRouter = {
  fetch: (_url: string, init: RequestInit) => fetch(router.url, init),
} as unknown as Gateway;

const historyCalls = () => sms.simulator.calls.filter((c) => c.operation === 'smshistory').length;
const subscriptions = () => sms.test.live!.stats.subscriptions;

/**
 * Subscribes through the router and waits until this gateway holds one more subscription and
 * its loop has polled the number since: a message that arrives after that is live.
 */
async function subscribe(resumeToken: string | null): Promise<SseStream> {
  const before = subscriptions();
  const stream = await subscribeSse(viaRouter, EDGES, basicAuth(DEMO_CREDENTIALS), {
    tids: [NUMBER.tid],
    resumeToken,
  });
  await until(() => subscriptions() > before, 15_000);
  const joined = historyCalls();
  await until(() => historyCalls() >= joined + 3, 15_000);
  return stream;
}

const edges = (stream: SseStream): EdgeEvent[] =>
  stream.events.map((event) => {
    expect(event.errors).toBeUndefined();
    return (event.data as { messageEdgeAdded: EdgeEvent }).messageEdgeAdded;
  });
const bodies = (stream: SseStream) => edges(stream).map((e) => e.edge.node.body);

const arrive = (body: string) => sms.simulator.deliver(DEMO_CREDENTIALS.sysId, NUMBER.tid, body);

describe('live updates through a federation router', () => {
  it("subscribes with docs/federation.md's document", () => {
    expect(EDGES).toMatch(/messageEdgeAdded\(tids: \$tids, resumeToken: \$resumeToken\)/);
  });

  it('resumes with the field-level resumeToken after a drop: what arrived meanwhile, once, then live', async () => {
    const first = await subscribe(null);
    arrive('before the drop');
    await first.waitFor(1, 15_000);
    const [event] = edges(first);
    expect(event).toMatchObject({ edge: { node: { body: 'before the drop' } } });
    // What the router drops: the token in `extensions` and the SSE event's `id:`.
    expect(first.events[0]?.extensions?.resumeToken).toBeUndefined();
    expect(first.ids).toEqual([undefined]);
    const token = event!.resumeToken;
    expect(token).toEqual(expect.any(String));

    // The connection drops; the router ends its subscription to this gateway in turn.
    first.close();
    await until(() => subscriptions() === 0, 15_000);
    arrive('during the drop 1');
    arrive('during the drop 2');

    // Back, with the field-level token; beside it a client that subscribes without one.
    const resumed = await subscribe(token);
    const fresh = await subscribe(null);
    await resumed.waitFor(2, 15_000);
    arrive('after the drop');
    await resumed.waitFor(3, 15_000);
    await fresh.waitFor(1, 15_000);

    expect(bodies(resumed)).toEqual(['during the drop 1', 'during the drop 2', 'after the drop']);
    const ids = [...edges(first), ...edges(resumed)].map((e) => e.edge.node.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Without the token, what arrived during the drop is lost: the resume is what brought it.
    expect(bodies(fresh)).toEqual(['after the drop']);
    resumed.close();
    fresh.close();
    await until(() => subscriptions() === 0, 15_000);
  }, 60_000);
});

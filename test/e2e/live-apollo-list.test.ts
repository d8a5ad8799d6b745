/**
 * Live events into the paged list, with Apollo Client against the built process: the list is
 * read once over HTTP (relayStylePagination on Number.messages), then each messageEdgeAdded edge
 * is prepended by the recipe of docs/paging.md (support/recipes/live-apollo-list.ts), which
 * subscribes after the list's head cursor: every message since the list was read, those that
 * arrived before the subscription included, at the head of the cached list, once, in order, with
 * no refetch; and the prepended edge's cursor pages on from there.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { liveFleetRun } from '../fixtures/live-fleet-run.js';
import { MessagesPageQuery } from '../fixtures/operations.js';
import { LIVE_AUTHORIZATION } from '../../support/live-fleet.js';
import { createLiveApolloClient } from '../../support/recipes/live-apollo.js';
import { headCursor, prependNewMessages } from '../../support/recipes/live-apollo-list.js';
import { until } from '../../support/wait.js';

/** What this test reads of MessagesPage's answer. */
interface MessagesData {
  number: {
    messages: {
      totalCount: number;
      edges: Array<{ cursor: string; node: { id: string } }>;
    };
  };
}

const run = liveFleetRun();

describe('Apollo Client: messageEdgeAdded into Number.messages', () => {
  it('prepends each new edge to the cached list without a refetch; its cursor pages on', async () => {
    const upstream = await run.upstream();
    const gateway = await run.copy(upstream, 200);
    let httpRequests = 0;
    const client = createLiveApolloClient(
      gateway.endpoint,
      gateway.endpoint.replace(/^http/, 'ws'),
      LIVE_AUTHORIZATION,
      {
        ws: { webSocketImpl: WebSocket },
        http: {
          fetch: (input, init) => {
            httpRequests += 1;
            return fetch(input, init);
          },
        },
      },
    );
    run.afterwards(() => client.stop());

    const variables = { tid: 'T-A', first: 3 };
    const first = await client.query<MessagesData>({ query: MessagesPageQuery, variables });
    const initial = first.data!.number.messages.edges.map((e) => e.node.id);
    expect(initial).toHaveLength(3);
    // Messages arrive from now on, and two before the subscription starts: the race of a list
    // read, then subscribed to.
    const stream = run.arrivals(upstream, 150);
    stream.addOne();
    stream.addOne();
    const after = [headCursor(first.data!.number.messages)];
    run.afterwards(prependNewMessages(client, ['T-A'], after));

    const cached = () => client.readQuery<MessagesData>({ query: MessagesPageQuery, variables })!;
    const cachedIds = () => cached().number.messages.edges.map((e) => e.node.id);
    // Messages arrive until the subscription has delivered five of them, then one last one.
    await until(() => cachedIds().length >= initial.length + 5, 10_000);
    stream.stop();
    const last = stream.addOne();
    await until(() => cachedIds()[0] === last, 10_000);

    const ids = cachedIds();
    const live = ids.slice(0, ids.length - initial.length);
    // Newest first, each once, every one since the list was read, then the page read before.
    expect(live).toEqual([...stream.ids].reverse());
    expect(ids.slice(live.length)).toEqual(initial);
    expect(cached().number.messages.totalCount).toBe(
      first.data!.number.messages.totalCount + live.length,
    );
    expect(httpRequests).toBe(1);

    // The prepended edge's cursor is one of the list's: `after` it come the older messages.
    const head = cached().number.messages.edges[0]!;
    const older = await client.query<MessagesData>({
      query: MessagesPageQuery,
      variables: { tid: 'T-A', first: 2, after: head.cursor },
      fetchPolicy: 'no-cache',
    });
    expect(older.data!.number.messages.edges.map((e) => e.node.id)).toEqual(ids.slice(1, 3));
  });
});

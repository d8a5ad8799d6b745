/**
 * The graphql-ws reconnect recipe (support/recipes/live-ws.ts, shown in docs/live-updates.md)
 * stops at a 4403: refused credentials are answered the same every time, so it reports the close
 * once instead of retrying ten times.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLiveWsClient, watchOverWs } from '../../support/recipes/live-ws.js';
import { until } from '../../support/wait.js';
import { serveGateway, type ServedGateway } from '../clients/served-gateway.js';

let served: ServedGateway;
let url: string;
beforeAll(async () => {
  served = await serveGateway({ live: { pollMs: 1_000 } });
  url = `${served.origin.replace(/^http/, 'ws')}/graphql`;
});
afterAll(() => served.close());

describe('the graphql-ws recipe', () => {
  it('reports a 4403 once, with its reason, and does not reconnect', async () => {
    const client = createLiveWsClient(url, 'Basic not-base64-at-all!', {
      webSocketImpl: WebSocket,
      retryWait: () => Promise.resolve(),
    });
    const errors: string[] = [];
    const stop = watchOverWs(client, ['TN-L-0001'], {
      onMessage: () => undefined,
      onResync: () => undefined,
      onError: (error) => errors.push(error.message),
    });
    await until(() => errors.length > 0, 5_000);
    // graphql-ws errors its subscribers only once it decided not to retry (a retried close is
    // silent, and retries here come at once): the error is the signal, no waiting for a
    // reconnect that cannot come.
    expect(errors).toEqual([expect.stringMatching(/^closed 4403: Malformed credentials/)]);
    expect(served.upgrades()).toBe(1);
    stop();
    await client.dispose();
  });
});

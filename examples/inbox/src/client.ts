/**
 * The Apollo Client set-up of docs/client-caching.md (the `apollo-setup` snippet), unchanged but
 * for the gateway's address and the credentials, which come in as arguments here.
 * test/clients/inbox.example.ts checks the two stay the same.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';
import { map } from 'rxjs';

export function createInboxClient(
  httpUrl: string,
  sysId: string,
  authToken: string,
  /** Called once per refused WebSocket connection (close 4403), with the close reason. */
  onRefused: (reason: string) => void,
): ApolloClient {
  const wsUrl = httpUrl.replace(/^http/, 'ws');
  const authorization = `Basic ${btoa(`${sysId}:${authToken}`)}`;

  const httpLink = new HttpLink({
    uri: httpUrl,
    headers: { Authorization: authorization },
  });
  // 4403: the gateway refused the credentials (the close reason says why); retrying won't help.
  // Apollo hands the subscriber only an Error's message: graphql-ws's `closed` event has the code.
  const refused = (event: unknown): event is { code: number; reason: string } =>
    (event as { code?: unknown } | null)?.code === 4403;
  const wsLink = new GraphQLWsLink(
    createClient({
      url: wsUrl,
      // In Node 20 also `webSocketImpl: WebSocket`, with `import WebSocket from 'ws'`.
      connectionParams: { Authorization: authorization },
      shouldRetry: (event) => !refused(event),
      on: { closed: (event) => refused(event) && onRefused(event.reason) },
    }),
  );
  // Each subscription keeps its latest resume token in its own variables, which graphql-ws sends
  // again when it reconnects: what arrived meanwhile comes first, nothing twice (live-updates.md).
  const resumeLink = new ApolloLink((operation, forward) => {
    const variables: Record<string, unknown> = { ...operation.variables };
    operation.variables = variables;
    return forward(operation).pipe(
      map((result) => {
        const token = result.extensions?.resumeToken ?? result.errors?.[0]?.extensions?.resumeToken;
        if (typeof token === 'string') variables.resumeToken = token;
        return result;
      }),
    );
  });

  const client = new ApolloClient({
    link: ApolloLink.split(
      ({ query }) => {
        const definition = getMainDefinition(query);
        return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
      },
      ApolloLink.from([resumeLink, wsLink]),
      httpLink,
    ),
    cache: new InMemoryCache({
      // Node is an interface: without this, fields selected through `... on Node` are dropped.
      possibleTypes: { Node: ['Number', 'Message'] },
      // Number and Message are keyed by their global `id` (select it); pages of messages merge.
      typePolicies: { Number: { fields: { messages: relayStylePagination() } } },
    }),
    // The gateway sends @defer results in the 2022-08-24 incremental format.
    incrementalHandler: new Defer20220824Handler(),
  });
  return client;
}

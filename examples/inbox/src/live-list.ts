// The recipe of docs/paging.md ("Live events in the list"), with the message fields this app
// shows: each messageEdgeAdded event goes to the head of the cached Number.messages, once, with
// no refetch (relayStylePagination keeps the pages; resumeLink in client.ts resumes after a
// reconnect).
import { gql, type ApolloClient, type ErrorLike, type Reference } from '@apollo/client';
import type { MessageNode } from './operations.js';

const MESSAGE_EDGE_ADDED = gql`
  subscription OnNewEdge($tids: [ID!], $after: [String!], $resumeToken: String) {
    messageEdgeAdded(tids: $tids, after: $after, resumeToken: $resumeToken) {
      resumeToken
      number {
        id
        tid
      }
      edge {
        cursor
        node {
          id
          sentAt
          direction
          phone
          body
        }
      }
    }
  }
`;

const LIVE_MESSAGE = gql`
  fragment LiveMessage on Message {
    id
    sentAt
    direction
    phone
    body
  }
`;

interface EdgeEvent {
  messageEdgeAdded: {
    number: { __typename: 'Number'; id: string; tid: string };
    edge: { cursor: string; node: { __typename: 'Message' } & MessageNode };
  };
}

/** What relayStylePagination keeps for a connection: edges whose node is a cache reference. */
interface StoredConnection {
  readonly edges: ReadonlyArray<{ readonly cursor: string; readonly node: Reference }>;
  readonly totalCount?: number;
}

/**
 * Prepends each new message on `tids` to its cached `Number.messages`, until called. `after`: the
 * head cursor of each list as shown, so what arrived between the list and the subscription comes
 * first (a number without one starts at its head). `onError` gets what ends or troubles the
 * stream (RESYNC_REQUIRED: refetch the list, then call again with its new head).
 */
export function prependNewMessages(
  client: ApolloClient,
  tids: string[],
  after: ReadonlyArray<string | undefined>,
  onError: (error: ErrorLike) => void = () => undefined,
): () => void {
  const heads = after.filter((cursor) => cursor !== undefined);
  const subscription = client
    .subscribe<EdgeEvent>({ query: MESSAGE_EDGE_ADDED, variables: { tids, after: heads } })
    .subscribe(({ data, error }) => {
      if (error) return onError(error);
      if (!data) return;
      const { number, edge } = data.messageEdgeAdded;
      const node = client.cache.writeFragment({ fragment: LIVE_MESSAGE, data: edge.node });
      client.cache.modify({
        id: client.cache.identify(number),
        fields: {
          messages(value: unknown) {
            const existing = value as StoredConnection;
            if (!node || existing.edges.some((e) => e.node.__ref === node.__ref)) return existing;
            return {
              ...existing,
              edges: [{ __typename: 'MessageEdge', cursor: edge.cursor, node }, ...existing.edges],
              ...(existing.totalCount !== undefined && { totalCount: existing.totalCount + 1 }),
            };
          },
        },
      });
    });
  return () => subscription.unsubscribe();
}

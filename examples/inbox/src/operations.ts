/** The operations the inbox runs, typed by hand (a larger app would use GraphQL Code Generator). */
import { gql, type TypedDocumentNode } from '@apollo/client';

export interface NumberSummary {
  id: string;
  tid: string;
  number: string;
  type: string;
}

export type MessageNode = {
  id: string;
  sentAt: string;
  direction: 'INBOUND' | 'OUTBOUND' | 'UNKNOWN';
  phone: string;
  body: string;
};

export interface MessagesPage {
  number: {
    id: string;
    tid: string;
    messages: {
      totalCount: number;
      edges: { cursor: string; node: MessageNode | null }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    } | null;
  } | null;
}

export const NUMBERS: TypedDocumentNode<{ ownedNumbers: NumberSummary[] | null }> = gql`
  query Numbers {
    ownedNumbers {
      id
      tid
      number
      type
    }
  }
`;

export const MESSAGES: TypedDocumentNode<
  MessagesPage,
  { tid: string; first: number; after?: string | null }
> = gql`
  query Messages($tid: ID!, $first: Int!, $after: String) {
    number(tid: $tid) {
      id
      tid
      messages(first: $first, after: $after) {
        totalCount
        edges {
          cursor
          node {
            id
            sentAt
            direction
            phone
            body
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`;

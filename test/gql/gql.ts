/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query ThroughNode {\n    ownedNumbers {\n      tid\n      ...NodeId\n    }\n  }\n  fragment NodeId on Node {\n    id\n  }\n": typeof types.ThroughNodeDocument,
    "\n      query Head($tid: ID!) {\n        number(tid: $tid) {\n          id\n          messages(first: 3) {\n            totalCount\n            edges {\n              cursor\n              node {\n                id\n                body\n              }\n            }\n          }\n        }\n      }\n    ": typeof types.HeadDocument,
    "\n  query OwnedNumbers($type: NumberType) {\n    ownedNumbers(type: $type) {\n      tid\n      number\n      type\n      webhook\n    }\n  }\n": typeof types.OwnedNumbersDocument,
    "\n  query NumberWithHistory($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      number\n      type\n      webhook\n      history(start: $start, end: $end) {\n        tid\n        number\n        requestedCount\n        totalCount\n        createdAt\n        mostRecentMessageId\n        mostRecentAt\n        optIn\n        messages {\n          id\n          systemId\n          sentAt\n          tid\n          phone\n          direction\n          body\n          mms\n          mediaUrl\n          status {\n            code\n            text\n            ok\n            raw\n          }\n        }\n      }\n    }\n  }\n": typeof types.NumberWithHistoryDocument,
    "\n  query EveryHistory($start: Int!, $end: Int!) {\n    ownedNumbers {\n      tid\n      history(start: $start, end: $end) {\n        totalCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n": typeof types.EveryHistoryDocument,
    "\n  query EveryNumberNeed($first: ID!, $second: ID!, $missing: ID!) {\n    local: ownedNumbers(type: LOCAL) {\n      tid\n      type\n    }\n    tollfree: ownedNumbers(type: TOLLFREE) {\n      tid\n      type\n    }\n    all: ownedNumbers {\n      tid\n    }\n    first: number(tid: $first) {\n      tid\n    }\n    second: number(tid: $second) {\n      tid\n    }\n    missing: number(tid: $missing) {\n      tid\n    }\n  }\n": typeof types.EveryNumberNeedDocument,
    "\n  query LocalTwice {\n    a: ownedNumbers(type: LOCAL) {\n      tid\n    }\n    b: ownedNumbers(type: LOCAL) {\n      number\n    }\n  }\n": typeof types.LocalTwiceDocument,
    "\n  query RepeatedHistory($tid: ID!) {\n    again: number(tid: $tid) {\n      first: history(start: 0, end: 5) {\n        totalCount\n      }\n      same: history(start: 0, end: 5) {\n        messages {\n          id\n        }\n      }\n      next: history(start: 5, end: 10) {\n        messages {\n          id\n        }\n      }\n    }\n    list: ownedNumbers {\n      tid\n      history(start: 0, end: 5) {\n        totalCount\n      }\n    }\n  }\n": typeof types.RepeatedHistoryDocument,
    "\n  query HistoryRange($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      history(start: $start, end: $end) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n": typeof types.HistoryRangeDocument,
    "\n  query MessagesPage($tid: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    number(tid: $tid) {\n      tid\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        totalCount\n        edges {\n          cursor\n          node {\n            id\n            body\n          }\n        }\n        pageInfo {\n          hasNextPage\n          hasPreviousPage\n          startCursor\n          endCursor\n        }\n      }\n    }\n  }\n": typeof types.MessagesPageDocument,
    "\n  query CoalescedRanges($tid: ID!) {\n    number(tid: $tid) {\n      a: history(start: 0, end: 10) {\n        requestedCount\n        totalCount\n        messages {\n          id\n        }\n      }\n      b: history(start: 5, end: 20) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n      page: messages(first: 15) {\n        totalCount\n        edges {\n          node {\n            id\n          }\n        }\n      }\n    }\n  }\n": typeof types.CoalescedRangesDocument,
    "\n          subscription OnNewMessage {\n            messageAdded(tids: [\"T-A\"]) {\n              id\n              tid\n              body\n            }\n          }\n        ": typeof types.OnNewMessageDocument,
};
const documents: Documents = {
    "\n  query ThroughNode {\n    ownedNumbers {\n      tid\n      ...NodeId\n    }\n  }\n  fragment NodeId on Node {\n    id\n  }\n": types.ThroughNodeDocument,
    "\n      query Head($tid: ID!) {\n        number(tid: $tid) {\n          id\n          messages(first: 3) {\n            totalCount\n            edges {\n              cursor\n              node {\n                id\n                body\n              }\n            }\n          }\n        }\n      }\n    ": types.HeadDocument,
    "\n  query OwnedNumbers($type: NumberType) {\n    ownedNumbers(type: $type) {\n      tid\n      number\n      type\n      webhook\n    }\n  }\n": types.OwnedNumbersDocument,
    "\n  query NumberWithHistory($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      number\n      type\n      webhook\n      history(start: $start, end: $end) {\n        tid\n        number\n        requestedCount\n        totalCount\n        createdAt\n        mostRecentMessageId\n        mostRecentAt\n        optIn\n        messages {\n          id\n          systemId\n          sentAt\n          tid\n          phone\n          direction\n          body\n          mms\n          mediaUrl\n          status {\n            code\n            text\n            ok\n            raw\n          }\n        }\n      }\n    }\n  }\n": types.NumberWithHistoryDocument,
    "\n  query EveryHistory($start: Int!, $end: Int!) {\n    ownedNumbers {\n      tid\n      history(start: $start, end: $end) {\n        totalCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n": types.EveryHistoryDocument,
    "\n  query EveryNumberNeed($first: ID!, $second: ID!, $missing: ID!) {\n    local: ownedNumbers(type: LOCAL) {\n      tid\n      type\n    }\n    tollfree: ownedNumbers(type: TOLLFREE) {\n      tid\n      type\n    }\n    all: ownedNumbers {\n      tid\n    }\n    first: number(tid: $first) {\n      tid\n    }\n    second: number(tid: $second) {\n      tid\n    }\n    missing: number(tid: $missing) {\n      tid\n    }\n  }\n": types.EveryNumberNeedDocument,
    "\n  query LocalTwice {\n    a: ownedNumbers(type: LOCAL) {\n      tid\n    }\n    b: ownedNumbers(type: LOCAL) {\n      number\n    }\n  }\n": types.LocalTwiceDocument,
    "\n  query RepeatedHistory($tid: ID!) {\n    again: number(tid: $tid) {\n      first: history(start: 0, end: 5) {\n        totalCount\n      }\n      same: history(start: 0, end: 5) {\n        messages {\n          id\n        }\n      }\n      next: history(start: 5, end: 10) {\n        messages {\n          id\n        }\n      }\n    }\n    list: ownedNumbers {\n      tid\n      history(start: 0, end: 5) {\n        totalCount\n      }\n    }\n  }\n": types.RepeatedHistoryDocument,
    "\n  query HistoryRange($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      history(start: $start, end: $end) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n": types.HistoryRangeDocument,
    "\n  query MessagesPage($tid: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    number(tid: $tid) {\n      tid\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        totalCount\n        edges {\n          cursor\n          node {\n            id\n            body\n          }\n        }\n        pageInfo {\n          hasNextPage\n          hasPreviousPage\n          startCursor\n          endCursor\n        }\n      }\n    }\n  }\n": types.MessagesPageDocument,
    "\n  query CoalescedRanges($tid: ID!) {\n    number(tid: $tid) {\n      a: history(start: 0, end: 10) {\n        requestedCount\n        totalCount\n        messages {\n          id\n        }\n      }\n      b: history(start: 5, end: 20) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n      page: messages(first: 15) {\n        totalCount\n        edges {\n          node {\n            id\n          }\n        }\n      }\n    }\n  }\n": types.CoalescedRangesDocument,
    "\n          subscription OnNewMessage {\n            messageAdded(tids: [\"T-A\"]) {\n              id\n              tid\n              body\n            }\n          }\n        ": types.OnNewMessageDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ThroughNode {\n    ownedNumbers {\n      tid\n      ...NodeId\n    }\n  }\n  fragment NodeId on Node {\n    id\n  }\n"): (typeof documents)["\n  query ThroughNode {\n    ownedNumbers {\n      tid\n      ...NodeId\n    }\n  }\n  fragment NodeId on Node {\n    id\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n      query Head($tid: ID!) {\n        number(tid: $tid) {\n          id\n          messages(first: 3) {\n            totalCount\n            edges {\n              cursor\n              node {\n                id\n                body\n              }\n            }\n          }\n        }\n      }\n    "): (typeof documents)["\n      query Head($tid: ID!) {\n        number(tid: $tid) {\n          id\n          messages(first: 3) {\n            totalCount\n            edges {\n              cursor\n              node {\n                id\n                body\n              }\n            }\n          }\n        }\n      }\n    "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OwnedNumbers($type: NumberType) {\n    ownedNumbers(type: $type) {\n      tid\n      number\n      type\n      webhook\n    }\n  }\n"): (typeof documents)["\n  query OwnedNumbers($type: NumberType) {\n    ownedNumbers(type: $type) {\n      tid\n      number\n      type\n      webhook\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NumberWithHistory($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      number\n      type\n      webhook\n      history(start: $start, end: $end) {\n        tid\n        number\n        requestedCount\n        totalCount\n        createdAt\n        mostRecentMessageId\n        mostRecentAt\n        optIn\n        messages {\n          id\n          systemId\n          sentAt\n          tid\n          phone\n          direction\n          body\n          mms\n          mediaUrl\n          status {\n            code\n            text\n            ok\n            raw\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query NumberWithHistory($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      number\n      type\n      webhook\n      history(start: $start, end: $end) {\n        tid\n        number\n        requestedCount\n        totalCount\n        createdAt\n        mostRecentMessageId\n        mostRecentAt\n        optIn\n        messages {\n          id\n          systemId\n          sentAt\n          tid\n          phone\n          direction\n          body\n          mms\n          mediaUrl\n          status {\n            code\n            text\n            ok\n            raw\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query EveryHistory($start: Int!, $end: Int!) {\n    ownedNumbers {\n      tid\n      history(start: $start, end: $end) {\n        totalCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query EveryHistory($start: Int!, $end: Int!) {\n    ownedNumbers {\n      tid\n      history(start: $start, end: $end) {\n        totalCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query EveryNumberNeed($first: ID!, $second: ID!, $missing: ID!) {\n    local: ownedNumbers(type: LOCAL) {\n      tid\n      type\n    }\n    tollfree: ownedNumbers(type: TOLLFREE) {\n      tid\n      type\n    }\n    all: ownedNumbers {\n      tid\n    }\n    first: number(tid: $first) {\n      tid\n    }\n    second: number(tid: $second) {\n      tid\n    }\n    missing: number(tid: $missing) {\n      tid\n    }\n  }\n"): (typeof documents)["\n  query EveryNumberNeed($first: ID!, $second: ID!, $missing: ID!) {\n    local: ownedNumbers(type: LOCAL) {\n      tid\n      type\n    }\n    tollfree: ownedNumbers(type: TOLLFREE) {\n      tid\n      type\n    }\n    all: ownedNumbers {\n      tid\n    }\n    first: number(tid: $first) {\n      tid\n    }\n    second: number(tid: $second) {\n      tid\n    }\n    missing: number(tid: $missing) {\n      tid\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LocalTwice {\n    a: ownedNumbers(type: LOCAL) {\n      tid\n    }\n    b: ownedNumbers(type: LOCAL) {\n      number\n    }\n  }\n"): (typeof documents)["\n  query LocalTwice {\n    a: ownedNumbers(type: LOCAL) {\n      tid\n    }\n    b: ownedNumbers(type: LOCAL) {\n      number\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RepeatedHistory($tid: ID!) {\n    again: number(tid: $tid) {\n      first: history(start: 0, end: 5) {\n        totalCount\n      }\n      same: history(start: 0, end: 5) {\n        messages {\n          id\n        }\n      }\n      next: history(start: 5, end: 10) {\n        messages {\n          id\n        }\n      }\n    }\n    list: ownedNumbers {\n      tid\n      history(start: 0, end: 5) {\n        totalCount\n      }\n    }\n  }\n"): (typeof documents)["\n  query RepeatedHistory($tid: ID!) {\n    again: number(tid: $tid) {\n      first: history(start: 0, end: 5) {\n        totalCount\n      }\n      same: history(start: 0, end: 5) {\n        messages {\n          id\n        }\n      }\n      next: history(start: 5, end: 10) {\n        messages {\n          id\n        }\n      }\n    }\n    list: ownedNumbers {\n      tid\n      history(start: 0, end: 5) {\n        totalCount\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query HistoryRange($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      history(start: $start, end: $end) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query HistoryRange($tid: ID!, $start: Int!, $end: Int!) {\n    number(tid: $tid) {\n      tid\n      history(start: $start, end: $end) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MessagesPage($tid: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    number(tid: $tid) {\n      tid\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        totalCount\n        edges {\n          cursor\n          node {\n            id\n            body\n          }\n        }\n        pageInfo {\n          hasNextPage\n          hasPreviousPage\n          startCursor\n          endCursor\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query MessagesPage($tid: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    number(tid: $tid) {\n      tid\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        totalCount\n        edges {\n          cursor\n          node {\n            id\n            body\n          }\n        }\n        pageInfo {\n          hasNextPage\n          hasPreviousPage\n          startCursor\n          endCursor\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CoalescedRanges($tid: ID!) {\n    number(tid: $tid) {\n      a: history(start: 0, end: 10) {\n        requestedCount\n        totalCount\n        messages {\n          id\n        }\n      }\n      b: history(start: 5, end: 20) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n      page: messages(first: 15) {\n        totalCount\n        edges {\n          node {\n            id\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query CoalescedRanges($tid: ID!) {\n    number(tid: $tid) {\n      a: history(start: 0, end: 10) {\n        requestedCount\n        totalCount\n        messages {\n          id\n        }\n      }\n      b: history(start: 5, end: 20) {\n        requestedCount\n        messages {\n          id\n        }\n      }\n      page: messages(first: 15) {\n        totalCount\n        edges {\n          node {\n            id\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n          subscription OnNewMessage {\n            messageAdded(tids: [\"T-A\"]) {\n              id\n              tid\n              body\n            }\n          }\n        "): (typeof documents)["\n          subscription OnNewMessage {\n            messageAdded(tids: [\"T-A\"]) {\n              id\n              tid\n              body\n            }\n          }\n        "];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;
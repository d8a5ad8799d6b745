/** The operations the tests send, typed against schema.graphql by `npm run codegen`. */
import { graphql } from '../gql/index.js';

export const OwnedNumbersQuery = graphql(`
  query OwnedNumbers($type: NumberType) {
    ownedNumbers(type: $type) {
      tid
      number
      type
      webhook
    }
  }
`);

export const NumberWithHistoryQuery = graphql(`
  query NumberWithHistory($tid: ID!, $start: Int!, $end: Int!) {
    number(tid: $tid) {
      tid
      number
      type
      webhook
      history(start: $start, end: $end) {
        tid
        number
        requestedCount
        totalCount
        createdAt
        mostRecentMessageId
        mostRecentAt
        optIn
        messages {
          id
          systemId
          sentAt
          tid
          phone
          direction
          body
          mms
          mediaUrl
          status {
            code
            text
            ok
            raw
          }
        }
      }
    }
  }
`);

export const EveryHistoryQuery = graphql(`
  query EveryHistory($start: Int!, $end: Int!) {
    ownedNumbers {
      tid
      history(start: $start, end: $end) {
        totalCount
        messages {
          id
        }
      }
    }
  }
`);

export const EveryNumberNeedQuery = graphql(`
  query EveryNumberNeed($first: ID!, $second: ID!, $missing: ID!) {
    local: ownedNumbers(type: LOCAL) {
      tid
      type
    }
    tollfree: ownedNumbers(type: TOLLFREE) {
      tid
      type
    }
    all: ownedNumbers {
      tid
    }
    first: number(tid: $first) {
      tid
    }
    second: number(tid: $second) {
      tid
    }
    missing: number(tid: $missing) {
      tid
    }
  }
`);

export const LocalTwiceQuery = graphql(`
  query LocalTwice {
    a: ownedNumbers(type: LOCAL) {
      tid
    }
    b: ownedNumbers(type: LOCAL) {
      number
    }
  }
`);

export const RepeatedHistoryQuery = graphql(`
  query RepeatedHistory($tid: ID!) {
    again: number(tid: $tid) {
      first: history(start: 0, end: 5) {
        totalCount
      }
      same: history(start: 0, end: 5) {
        messages {
          id
        }
      }
      next: history(start: 5, end: 10) {
        messages {
          id
        }
      }
    }
    list: ownedNumbers {
      tid
      history(start: 0, end: 5) {
        totalCount
      }
    }
  }
`);

export const HistoryRangeQuery = graphql(`
  query HistoryRange($tid: ID!, $start: Int!, $end: Int!) {
    number(tid: $tid) {
      tid
      history(start: $start, end: $end) {
        requestedCount
        messages {
          id
        }
      }
    }
  }
`);

export const MessagesPageQuery = graphql(`
  query MessagesPage($tid: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    number(tid: $tid) {
      tid
      messages(first: $first, after: $after, last: $last, before: $before) {
        totalCount
        edges {
          cursor
          node {
            id
            body
          }
        }
        pageInfo {
          hasNextPage
          hasPreviousPage
          startCursor
          endCursor
        }
      }
    }
  }
`);

export const CoalescedRangesQuery = graphql(`
  query CoalescedRanges($tid: ID!) {
    number(tid: $tid) {
      a: history(start: 0, end: 10) {
        requestedCount
        totalCount
        messages {
          id
        }
      }
      b: history(start: 5, end: 20) {
        requestedCount
        messages {
          id
        }
      }
      page: messages(first: 15) {
        totalCount
        edges {
          node {
            id
          }
        }
      }
    }
  }
`);

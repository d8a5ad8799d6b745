/** Number.messages: the message history as a Relay cursor connection (paging.ts does the work). */
import { builder } from './builder.js';
// Number.history first, whatever is imported first: the printed field order must not vary.
import './history.js';
import { MESSAGES_COST, MESSAGES_LIST_SIZE } from './cost.js';
import { MessageRef, messageOrError } from './message.js';
import { NumberRef } from './numbers.js';
import { loadPage, MAX_PAGE_SIZE, maxPageSize, planPage } from './paging.js';

/** Also the edge a live MessageEdgeEvent carries (src/graph/live.ts). */
export const MessageEdgeRef = builder.edgeObject({
  type: MessageRef,
  name: 'MessageEdge',
  nodeNullable: true,
  description: 'One message in a page, with its cursor.',
});

builder.objectField(NumberRef, 'messages', (t) =>
  t.connection(
    {
      type: MessageRef,
      nullable: true,
      // An unreadable record keeps its edge and cursor; only its node is null, with its error.
      nodeNullable: true,
      listSize: MESSAGES_LIST_SIZE,
      extensions: MESSAGES_COST,
      description:
        "This number's messages, newest first (the service's order), a page at a time. " +
        '`first` (with `after`) pages towards older messages, `last` (with `before`) towards newer ' +
        `ones; at most ${MAX_PAGE_SIZE} per page. Cursors name a message, so messages arriving ` +
        'between two page requests cause no duplicate and no gap. A record the service sent that ' +
        'cannot be read keeps its edge, with a null node and an error there. Null (with an error at this ' +
        'path) when the service fails or the arguments are refused.',
      resolve: async (number, args, context) => {
        const plan = planPage(args, number.tid, context.cursors, maxPageSize(context.limits));
        const { credentials, loaders: upstream } = context.account();
        const read = (range: { start: number; end: number }) =>
          upstream.history({ tid: number.tid, number: number.number, ...range });
        // The next page finds its number in the cursor, with no lookup (numbers.ts, numberFromCursor).
        const owner = {
          number: number.number,
          account: context.cursors.accountTag(credentials.sysId),
        };
        const page = await loadPage(plan, read, number.tid, context.cursors, owner);
        const edges = page.edges.map((e) => ({ cursor: e.cursor, node: messageOrError(e.node) }));
        return { ...page, edges };
      },
    },
    {
      name: 'MessageConnection',
      description: 'A page of messages of one number, newest first.',
      fields: (c) => ({
        totalCount: c.int({
          description: 'How many messages the service holds for this number, as of this page.',
          resolve: (connection) => connection.totalCount,
        }),
      }),
    },
    MessageEdgeRef,
  ),
);

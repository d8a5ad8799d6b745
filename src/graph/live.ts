/** Live updates: Subscription.messageAdded, fed by the shared poll loops of src/live/. */
import { GraphQLError } from 'graphql';
import type { Message } from '../core/domain.js';
import { badUserInput, ErrorCode } from '../core/errors.js';
import type { LiveEvent } from '../live/bus.js';
import { builder } from './builder.js';
import { MessageRef } from './message.js';

builder.subscriptionType({
  description: 'Live updates, over GraphQL over SSE or graphql-ws (WebSocket) at /graphql.',
});

builder.subscriptionField('messageAdded', (t) =>
  t.field({
    type: MessageRef,
    description:
      "New messages on these numbers of the caller's account (every number when `tids` is left " +
      'out), each delivered once, oldest first. Found by polling the service every LIVE_POLL_MS, ' +
      'once per account and number however many subscribers share it. A poll that keeps failing ' +
      'arrives as an error event; the stream goes on.',
    args: {
      tids: t.arg.idList({
        required: false,
        description: 'The numbers to watch, by tid; leave out for every number of the account.',
      }),
    },
    subscribe: async (_root, args, context) => {
      const { credentials, loaders } = context.account();
      if (!context.live) {
        throw new GraphQLError('Live updates are turned off on this gateway (LIVE_POLL_MS=0)', {
          extensions: { code: ErrorCode.LiveUpdatesOff },
        });
      }
      const tids = args.tids?.map(String);
      let numbers;
      if (tids === undefined) {
        numbers = await loaders.ownedNumbers();
      } else {
        const unique = [...new Set(tids)];
        const found = await Promise.all(unique.map((tid) => loaders.numberByTid(tid)));
        const missing = unique.filter((_, i) => found[i] === null);
        if (missing.length > 0) {
          throw badUserInput(
            `messageAdded: this account has no number with tid ${missing.map((m) => `"${m}"`).join(', ')}`,
            'tids',
          );
        }
        numbers = found.filter((n) => n !== null);
      }
      await context.live.verified(credentials);
      return context.live.subscribe(
        credentials,
        numbers.map((n) => ({ tid: n.tid, number: n.number })),
      );
    },
    resolve: (event: LiveEvent): Message => {
      if (event.kind === 'error') {
        throw new GraphQLError(event.message, { extensions: { code: event.code } });
      }
      return event.message;
    },
  }),
);

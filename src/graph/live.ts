/**
 * Subscription.messageAdded and messageEdgeAdded (docs/live-updates.md), fed by the poll loops of
 * src/live/; each result carries a resume token (resume-tokens.ts).
 */
import { GraphQLError } from 'graphql';
import type { Message, OwnedNumber } from '../core/domain.js';
import { badUserInput, ErrorCode, resyncRequired } from '../core/errors.js';
import type { Delivery } from '../live/subscription.js';
import { builder } from './builder.js';
import type { GatewayContext } from './context.js';
import { MessageRef } from './message.js';
import { MessageEdgeRef } from './message-connection.js';
import { NumberRef } from './numbers.js';
import {
  decodeAfterCursors,
  decodeResumeToken,
  encodeResumeToken,
  MAX_WATCHED_NUMBERS,
  messageCursor,
  type AfterRefusal,
} from './resume-tokens.js';
import type { Positions } from '../live/subscription.js';

builder.subscriptionType({
  description: 'Live updates, over GraphQL over SSE or graphql-ws (WebSocket) at /graphql.',
});

/** Tids a "no number with tid" refusal names; the rest are counted. */
const MISSING_NAMED = 10;

type LiveDelivery = Delivery<OwnedNumber>;

// The token of the result being produced per context (one subscription, one event at a time).
const resultTokens = new WeakMap<object, string>();

/** The resume token of the result just produced for `context`, once. */
export function takeResumeToken(context: object): string | undefined {
  const token = resultTokens.get(context);
  resultTokens.delete(context);
  return token;
}

const liveArgs = builder.args((t) => ({
  tids: t.idList({
    required: false,
    description:
      'The numbers to watch, by tid; leave out for every number of the account. Not empty.',
  }),
  after: t.stringList({
    required: false,
    description:
      "Start after the list a client shows: the head cursor (`edges[0].cursor`, or the first page's " +
      '`pageInfo.startCursor`) of `Number.messages` of each watched number, at most one per number. ' +
      'Every message newer than it is delivered first, once, oldest first, then the live ones, so ' +
      'nothing that arrived between the list and the subscription is missed. Numbers without one ' +
      'start at their head when the subscription starts. A cursor of a number not watched, of another ' +
      "account, or not this gateway's: BAD_USER_INPUT. More than 200 messages behind, or signed with " +
      'a key this gateway no longer has: RESYNC_REQUIRED; refetch the list, then subscribe with its ' +
      'new head. `resumeToken` (or SSE Last-Event-ID) wins for the numbers it names.',
  }),
  resumeToken: t.string({
    required: false,
    description:
      'Resume after the event that carried this token (its `extensions.resumeToken`, or the SSE event id): ' +
      'what arrived since is delivered first, once, oldest first. SSE `Last-Event-ID` does the same and wins ' +
      'over this argument. Too far behind, or signed with a key this gateway no longer has: a RESYNC_REQUIRED ' +
      'error; refetch, then subscribe without a token.',
  }),
}));

const DESCRIPTION_TAIL =
  'Found by polling the service every LIVE_POLL_MS, once per account and number however many ' +
  'subscribers share it. A poll that keeps failing arrives as an error event; the stream goes ' +
  'on. A reader that falls behind is ended with SLOW_CONSUMER (extensions.resumeToken resumes).';

builder.subscriptionField('messageAdded', (t) =>
  t.field({
    type: MessageRef,
    description:
      "New messages on these numbers of the caller's account (every number when `tids` is left " +
      'out), each delivered once, oldest first; `extensions.resumeToken` of each result resumes ' +
      `after it. ${DESCRIPTION_TAIL}`,
    args: liveArgs,
    subscribe: (_root, args, context) => subscribe('messageAdded', args, context),
    resolve: (delivery: LiveDelivery, _args, context): Message =>
      delivered(delivery, context).message,
  }),
);

interface MessageEdgeEventShape {
  readonly resumeToken: string;
  readonly number: OwnedNumber;
  readonly edge: { readonly cursor: string; readonly node: Message };
}

const MessageEdgeEventRef = builder.objectRef<MessageEdgeEventShape>('MessageEdgeEvent').implement({
  description:
    'A new message as an edge of `Number.messages`: prepend `edge` to that list (its cursor works ' +
    'with `after`/`before`); `resumeToken` resumes the subscription after this event.',
  fields: (t) => ({
    resumeToken: t.exposeString('resumeToken', {
      description:
        'Give it back as `resumeToken` (or SSE Last-Event-ID) to resume after this event.',
    }),
    number: t.expose('number', {
      type: NumberRef,
      description: 'The number whose `messages` list this edge belongs to.',
    }),
    edge: t.expose('edge', {
      type: MessageEdgeRef,
      description: 'The message (`node`) and its cursor in `Number.messages`.',
    }),
  }),
});

builder.subscriptionField('messageEdgeAdded', (t) =>
  t.field({
    type: MessageEdgeEventRef,
    description:
      'The same events as `messageAdded`, each as an edge of `Number.messages` with its number and ' +
      `resume token, ready for Relay @prependEdge or Apollo relayStylePagination. ${DESCRIPTION_TAIL}`,
    args: liveArgs,
    subscribe: (_root, args, context) => subscribe('messageEdgeAdded', args, context),
    resolve: (delivery: LiveDelivery, _args, context): MessageEdgeEventShape => {
      const { message, seq, total, target, token } = delivered(delivery, context);
      // Like a page's cursors, it names its number and account: paging on from it needs no lookup.
      const account = context.cursors.accountTag(context.account().credentials.sysId);
      const owner = { number: target.number, account };
      const cursor = messageCursor(
        context.cursors,
        target.tid,
        { seq, total, id: message.id },
        owner,
      );
      return { resumeToken: token ?? '', number: target, edge: { cursor, node: message } };
    },
  }),
);

/** The delivered message with its token (left for takeResumeToken); a failure is thrown. */
function delivered(delivery: LiveDelivery, context: GatewayContext) {
  const { positions } = delivery;
  const token = positions ? encodeResumeToken(context.cursors, positions) : undefined;
  if (token === undefined) resultTokens.delete(context);
  else resultTokens.set(context, token);
  if (delivery.kind === 'message') return { ...delivery, token };
  const extra = token !== undefined ? { resumeToken: token } : {};
  if (delivery.kind === 'error') {
    throw new GraphQLError(delivery.message, { extensions: { code: delivery.code, ...extra } });
  }
  throw new GraphQLError(
    `A new message on ${delivery.target.tid} could not be read: ${delivery.reason}`,
    { extensions: { code: ErrorCode.UpstreamError, ...extra } },
  );
}

async function subscribe(
  field: string,
  args: {
    readonly tids?: readonly (string | number)[] | null;
    readonly after?: readonly string[] | null;
    readonly resumeToken?: string | null;
  },
  context: GatewayContext,
): Promise<AsyncIterableIterator<LiveDelivery>> {
  const { credentials, loaders } = context.account();
  if (!context.live) {
    throw new GraphQLError('Live updates are turned off on this gateway (LIVE_POLL_MS=0)', {
      extensions: { code: ErrorCode.LiveUpdatesOff },
    });
  }
  const tids = args.tids ? [...new Set(args.tids.map(String))] : undefined;
  if (tids !== undefined && tids.length === 0) {
    throw badUserInput(`${field}: \`tids\` is empty; leave it out to watch every number`, 'tids');
  }
  if (tids !== undefined && tids.length > MAX_WATCHED_NUMBERS) {
    throw badUserInput(
      `${field}: \`tids\` names ${tids.length} numbers, more than the ${MAX_WATCHED_NUMBERS} one subscription watches; split them across subscriptions`,
      'tids',
    );
  }
  // SSE: the request's Last-Event-ID (the transport's latest) wins over the argument; its signal
  // ends the subscription when the client goes away. A WebSocket's context has headers only.
  const request = (context as { request?: SseRequest }).request;
  const token = request?.headers?.get?.('last-event-id') || (args.resumeToken ?? null);
  const start = token === null ? null : decodeResumeToken(context.cursors, token);
  if (start === 'unknown-key') {
    throw resyncRequired(
      `${field}: \`resumeToken\` was signed with a key this gateway no longer has (a restart or a key rotation); refetch the list, then subscribe without a token`,
    );
  }
  if (start === 'malformed') {
    throw badUserInput(
      `${field}: \`resumeToken\` is not a token this gateway issued; pass back an event's resumeToken unchanged`,
      'resumeToken',
    );
  }
  const after = args.after ? afterPositions(field, args.after, context, credentials.sysId) : null;
  // Checked before anything outlives the request, and remembered refusals cost the service nothing.
  await context.live.admission.verified(credentials);
  let numbers: readonly OwnedNumber[];
  if (tids === undefined) {
    numbers = await loaders.ownedNumbers();
    // Refused rather than silently missing the messages of some numbers.
    if (numbers.length > MAX_WATCHED_NUMBERS) {
      throw badUserInput(
        `${field}: this account has ${numbers.length} numbers, more than the ${MAX_WATCHED_NUMBERS} one subscription watches; pass \`tids\`, split across subscriptions`,
        'tids',
      );
    }
  } else {
    const found = await Promise.all(tids.map((tid) => loaders.numberByTid(tid)));
    const missing = tids.filter((_, i) => found[i] === null);
    if (missing.length > 0) {
      const named = missing.slice(0, MISSING_NAMED).map((m) => `"${m}"`);
      const more = missing.length - named.length;
      throw badUserInput(
        `${field}: this account has no number with tid ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`,
        'tids',
      );
    }
    numbers = found.filter((n) => n !== null);
  }
  if (after) {
    const watched = new Set(numbers.map((n) => n.tid));
    const stray = [...after.keys()].find((tid) => !watched.has(tid));
    if (stray !== undefined) {
      throw badUserInput(
        `${field}: \`after\` holds a cursor of number "${stray}", which this subscription does not watch${tids === undefined ? ' (the account has no such number)' : '; add it to `tids`, or leave the cursor out'}`,
        'after',
      );
    }
  }
  // `after` starts where the lists stand; a resume token, later, wins for the numbers it names.
  const from = after && start ? new Map([...after, ...start]) : (start ?? after);
  const source = context.live.subscribe(credentials, numbers, from);
  // Ended at once: the wrappers above may hold return() until the next event.
  request?.signal?.addEventListener('abort', () => void source.return?.(), { once: true });
  return source;
}

const AFTER_REFUSALS: Record<Exclude<AfterRefusal, 'unknown-key'>, string> = {
  malformed:
    "is not a list of cursors this gateway issued; pass the head cursor of each list (an edge's cursor or pageInfo.startCursor) unchanged",
  'two-for-one-number': 'holds two cursors of one number; pass only the head of its list',
  'other-account': 'holds a cursor issued to another account',
};

/** Where `after` starts each number it names; refused as the caller's mistake, or RESYNC_REQUIRED. */
function afterPositions(
  field: string,
  cursors: readonly string[],
  context: GatewayContext,
  sysId: string,
): Positions {
  const decoded = decodeAfterCursors(context.cursors, cursors, sysId);
  if (decoded === 'unknown-key') {
    throw resyncRequired(
      `${field}: \`after\` holds a cursor signed with a key this gateway no longer has (a restart or a key rotation); refetch the list, then subscribe after its new head`,
    );
  }
  if (typeof decoded === 'string') {
    throw badUserInput(`${field}: \`after\` ${AFTER_REFUSALS[decoded]}`, 'after');
  }
  return decoded;
}

interface SseRequest {
  readonly headers?: { get?: (name: string) => string | null };
  readonly signal?: AbortSignal;
}

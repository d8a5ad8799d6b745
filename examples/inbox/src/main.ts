/**
 * The inbox: sign in with an account's credentials, pick a number, read its messages newest
 * first, load older pages, see new ones arrive live, and see every error as the gateway words it
 * (`extensions.code` and message). Plain DOM, so the GraphQL parts are all there is to read.
 */
import { CombinedGraphQLErrors, type ApolloClient, type ObservableQuery } from '@apollo/client';
import { createInboxClient } from './client.js';
import { prependNewMessages } from './live-list.js';
import {
  MESSAGES,
  NUMBERS,
  type MessageNode,
  type MessagesPage,
  type NumberSummary,
} from './operations.js';

const PAGE_SIZE = 20;
// The gateway's demo mode prints these; they are not secrets.
const DEMO = { sysId: 'AC-demo-0001', authToken: 'demo-token-7f3a9c' };

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const form = $<HTMLFormElement>('sign-in');
const errorBox = $<HTMLParagraphElement>('error');
const numbersList = $<HTMLUListElement>('numbers');
const title = $<HTMLHeadingElement>('title');
const live = $<HTMLParagraphElement>('live');
const messagesList = $<HTMLOListElement>('messages');
const older = $<HTMLButtonElement>('older');

const params = new URLSearchParams(location.search);
const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement;
field('gateway').value = params.get('gateway') ?? 'http://localhost:4000/graphql';
field('sysId').value = params.get('sysId') ?? DEMO.sysId;
field('authToken').value = params.get('authToken') ?? DEMO.authToken;

let client: ApolloClient | null = null;
let page: ObservableQuery<
  MessagesPage,
  { tid: string; first: number; after?: string | null }
> | null = null;
/** What to stop when the screen changes: the watched list and the live subscription. */
const running: (() => void)[] = [];
/** The list's totalCount when it was first read: arrivals are counted from there. */
let firstTotal: number | null = null;

/** What the gateway said, as a person reads it: `CODE: message`, one line per error. */
function describe(error: unknown): string {
  if (CombinedGraphQLErrors.is(error)) {
    return error.errors
      .map((e) => `${String(e.extensions?.['code'] ?? 'ERROR')}: ${e.message}`)
      .join('\n');
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * RESYNC_REQUIRED: the gateway cannot continue from a cursor or resume token it was given (it
 * restarted without its secret or rotated it, or the stream fell too far behind). The answer is
 * the same each time: read the list again, then watch it afresh.
 */
function resyncRequired(error: unknown): boolean {
  return (
    CombinedGraphQLErrors.is(error) &&
    error.errors.some((e) => e.extensions?.['code'] === 'RESYNC_REQUIRED')
  );
}

function showError(error: unknown): void {
  errorBox.textContent = describe(error);
  errorBox.hidden = false;
}

function clearError(): void {
  errorBox.hidden = true;
  errorBox.textContent = '';
}

function stopAll(): void {
  for (const stop of running.splice(0)) stop();
  page = null;
  firstTotal = null;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void signIn();
});

async function signIn(): Promise<void> {
  stopAll();
  client?.stop();
  clearError();
  numbersList.replaceChildren();
  messagesList.replaceChildren();
  older.hidden = true;
  live.hidden = true;
  title.textContent = 'Pick a number';
  client = createInboxClient(
    field('gateway').value,
    field('sysId').value,
    field('authToken').value,
    // Live updates were refused (close 4403): the credentials need changing, not a retry.
    (reason) => showError(`Live updates refused: ${reason}. Sign in again.`),
  );
  const { data, error } = await client.query({ query: NUMBERS, errorPolicy: 'all' });
  if (error) showError(error);
  for (const number of data?.ownedNumbers ?? []) numbersList.append(numberButton(number));
}

function numberButton(number: NumberSummary): HTMLLIElement {
  const item = document.createElement('li');
  const button = document.createElement('button');
  button.type = 'button';
  button.dataset['tid'] = number.tid;
  button.textContent = `${number.number} (${number.type.toLowerCase()})`;
  button.addEventListener('click', () => {
    for (const other of numbersList.querySelectorAll('button')) other.ariaPressed = 'false';
    button.ariaPressed = 'true';
    open(number);
  });
  item.append(button);
  return item;
}

function open(number: NumberSummary): void {
  if (!client) return;
  stopAll();
  clearError();
  title.textContent = number.number;
  live.hidden = true;
  const watched = client.watchQuery({
    query: MESSAGES,
    variables: { tid: number.tid, first: PAGE_SIZE },
    errorPolicy: 'all',
  });
  page = watched;
  let arrivalsWatched = false;
  const apollo = client;
  const watching = watched.subscribe(({ data, error }) => {
    if (error) showError(error);
    const shown = data as MessagesPage | undefined;
    renderMessages(shown);
    // Once the list is shown, from its head: what arrived since it was read comes first.
    if (shown?.number && !arrivalsWatched) {
      arrivalsWatched = true;
      watchArrivals(apollo, number.tid, watched, shown.number.messages?.edges[0]?.cursor);
    }
  });
  running.push(() => watching.unsubscribe());
}

/**
 * New messages on this number, each put at the head of the cached list by the recipe of
 * docs/paging.md; across reconnects the resume token (client.ts) brings what arrived meanwhile.
 */
function watchArrivals(
  apollo: ApolloClient,
  tid: string,
  watched: NonNullable<typeof page>,
  head: string | undefined,
): void {
  const stop = prependNewMessages(apollo, [tid], [head], (error) => {
    if (!resyncRequired(error)) return showError(error);
    // The resume token cannot be used (too long away, or the gateway's key changed): read the
    // list again, then watch from its new head with no token.
    stop();
    void watched.refetch().then(({ data }) => {
      const newHead = (data as MessagesPage | undefined)?.number?.messages?.edges[0]?.cursor;
      if (page === watched) watchArrivals(apollo, tid, watched, newHead);
    }, showError);
  });
  running.push(stop);
}

function renderMessages(data: MessagesPage | undefined): void {
  const connection = data?.number?.messages;
  messagesList.replaceChildren(
    ...(connection?.edges ?? [])
      .map((edge) => edge.node)
      .filter((node): node is MessageNode => node !== null)
      .map(messageItem),
  );
  older.hidden = !connection?.pageInfo.hasNextPage;
  if (connection) {
    firstTotal ??= connection.totalCount;
    const arrived = connection.totalCount - firstTotal;
    live.textContent = `${arrived} new while you were here`;
    live.hidden = arrived === 0;
    title.textContent = `${title.textContent?.split(' · ')[0] ?? ''} · ${connection.totalCount} messages`;
  }
}

function messageItem(message: MessageNode): HTMLLIElement {
  const item = document.createElement('li');
  item.className = `message ${message.direction}`;
  item.dataset['id'] = message.id;
  const meta = document.createElement('small');
  const arrow = message.direction === 'INBOUND' ? 'from' : 'to';
  meta.textContent = `${new Date(message.sentAt).toLocaleString()} · ${arrow} ${message.phone}`;
  const body = document.createElement('span');
  body.className = 'body';
  body.textContent = message.body;
  item.append(meta, body);
  return item;
}

older.addEventListener('click', () => {
  const watched = page;
  const after = watched?.getCurrentResult().data?.number?.messages?.pageInfo?.endCursor;
  if (!watched || !after) return;
  older.disabled = true;
  watched
    .fetchMore({ variables: { after } })
    .catch(async (error: unknown) => {
      if (!resyncRequired(error)) return showError(error);
      // The cursor's key is gone (the gateway restarted without its secret, or rotated it):
      // read the list again from the first page.
      await watched.refetch().catch(showError);
    })
    .finally(() => (older.disabled = false));
});

void signIn();

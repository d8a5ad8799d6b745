/**
 * Federation fixtures: a small second subgraph (contacts) that extends `Number`, composition of
 * this gateway's checked-in SDL with it, and a Hive Gateway router over the composed supergraph.
 * Every server listens on 127.0.0.1, port 0.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import httpTransport from '@graphql-mesh/transport-http';
import { composeServices, type CompositionResult } from '@theguild/federation-composition';
import { parse, type DocumentNode } from 'graphql';
import { createYoga } from 'graphql-yoga';

/** The subgraph name this gateway has in the supergraph; the router's header rule keys on it. */
export const SMS_SUBGRAPH = 'sms';
export const CONTACTS_SUBGRAPH = 'contacts';

/** The headers that carry an account's credentials (README, "Credentials"). */
export const CREDENTIAL_HEADERS = ['authorization', 'x-sys-id', 'x-auth-token'] as const;

export const CONTACTS_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type Query {
    "Every contact of the address book."
    contacts: [Contact!]!
  }

  "A person in the address book, reachable on one of the account's numbers."
  type Contact {
    id: ID!
    name: String!
    "The number this contact is reached on; resolved by the SMS subgraph."
    number: Number
  }

  "The SMS subgraph's entity, extended with the contacts reached on it."
  type Number @key(fields: "tid") {
    tid: ID!
    contacts: [Contact!]!
  }
`;

export const CONTACTS_TYPE_DEFS = parse(CONTACTS_SDL);

export interface Contact {
  readonly id: string;
  readonly name: string;
  readonly tid: string;
}

/** Contacts on numbers of the demo account (two share one number). */
export const CONTACTS: readonly Contact[] = [
  { id: 'C-1', name: 'Ada Lovelace', tid: 'TN-L-0001' },
  { id: 'C-2', name: 'Grace Hopper', tid: 'TN-T-0001' },
  { id: 'C-3', name: 'Alan Turing', tid: 'TN-L-0001' },
];

export interface RunningHttpServer {
  readonly url: string;
  close(): Promise<void>;
}

export interface RunningContactsSubgraph extends RunningHttpServer {
  /** The headers of every request the subgraph received, in order. */
  readonly requestHeaders: Headers[];
}

/** Serves a request listener on 127.0.0.1 at an ephemeral port. */
export async function listenOnLoopback(
  listener: RequestListener,
  path = '/graphql',
): Promise<RunningHttpServer> {
  const server: Server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The contacts subgraph: @apollo/subgraph's buildSubgraphSchema served by graphql-yoga. */
export async function startContactsSubgraph(): Promise<RunningContactsSubgraph> {
  const requestHeaders: Headers[] = [];
  const schema = buildSubgraphSchema({
    typeDefs: CONTACTS_TYPE_DEFS,
    resolvers: {
      Query: { contacts: () => CONTACTS },
      Contact: { number: (contact: Contact) => ({ __typename: 'Number', tid: contact.tid }) },
      Number: {
        __resolveReference: (ref: { tid: string }) => ({ tid: ref.tid }),
        contacts: (number: { tid: string }) => CONTACTS.filter((c) => c.tid === number.tid),
      },
    },
  });
  const yoga = createYoga({
    schema,
    logging: false,
    context: ({ request }) => {
      requestHeaders.push(new Headers(request.headers));
      return {};
    },
  });
  const server = await listenOnLoopback(yoga);
  return { ...server, requestHeaders };
}

/** This gateway's SDL as deployed: the checked-in file that `npm run schema` writes. */
export async function readSmsSubgraphSdl(): Promise<DocumentNode> {
  return parse(await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8'));
}

/** Composes the SMS subgraph with the contacts subgraph (and any others given). */
export async function composeWithContacts(
  urls: { sms: string; contacts: string },
  contactsTypeDefs: DocumentNode = CONTACTS_TYPE_DEFS,
): Promise<CompositionResult> {
  return composeServices([
    { name: SMS_SUBGRAPH, typeDefs: await readSmsSubgraphSdl(), url: urls.sms },
    { name: CONTACTS_SUBGRAPH, typeDefs: contactsTypeDefs, url: urls.contacts },
  ]);
}

/**
 * The router configuration the README documents: the client's credential headers go to the SMS
 * subgraph, and to no other.
 */
export function forwardCredentials({
  request,
  subgraphName,
}: {
  request: Request;
  subgraphName: string;
}): Record<string, string | null> {
  if (subgraphName !== SMS_SUBGRAPH) return {};
  return Object.fromEntries(CREDENTIAL_HEADERS.map((name) => [name, request.headers.get(name)]));
}

export interface RunningRouter extends RunningHttpServer {
  readonly runtime: GatewayRuntime;
}

/** A Hive Gateway router serving the supergraph, with the README's header propagation. */
export async function startRouter(supergraph: string): Promise<RunningRouter> {
  const runtime = createGatewayRuntime({
    supergraph,
    logging: false,
    // Named here rather than loaded by name at run time, so a missing package fails at import.
    transports: { http: httpTransport },
    propagateHeaders: { fromClientToSubgraphs: forwardCredentials },
  });
  const server = await listenOnLoopback(runtime);
  return {
    ...server,
    runtime,
    close: async () => {
      await server.close();
      await runtime.dispose();
    },
  };
}

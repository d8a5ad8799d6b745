/**
 * A reference point for scenario (a), beside the bare proxy: graphql-yoga with a one-field
 * schema, its defaults, and no upstream call at all. What it costs per request is what the
 * GraphQL server layer alone costs on this machine, before any work of the gateway's own.
 * Run as a child of bench/run.ts; it reports `ready` over IPC.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';

const yoga = createYoga({
  schema: createSchema({
    typeDefs: 'type Query { hello: String! }',
    resolvers: { Query: { hello: () => 'hello' } },
  }),
  logging: false,
  // As the gateway runs it: its own body limit instead of yoga's, which pipes every body through
  // a TransformStream (with it, this server cost three times as much per request).
  maxRequestBodySize: false,
});
const server = createServer(yoga);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` });
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

/**
 * The live-resume plugin on a yoga of its own, over SSE: the stream opens with a comment at
 * once, an event carrying a resume token has it as its SSE `id:` (and one with a line break has
 * none), the stream ends with `event: complete` unless the copy is shutting down, a refused
 * resume token from `Last-Event-ID` is said of that header, and a client that leaves ends the
 * subscription. (Tokens on live events, end to end: test/live/resume.test.ts.)
 */
import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useLiveResume } from '../../../src/http/plugins/live-resume.js';

let left: () => void = () => {};
const subscriptionLeft = () => new Promise<void>((resolve) => (left = resolve));

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query {
      ok: Boolean
    }
    type Subscription {
      ticks(n: Int!): Int
      failing(token: String!): Int
      refused: Int
      forever: Int
    }
  `,
  resolvers: {
    Subscription: {
      ticks: {
        async *subscribe(_: unknown, { n }: { n: number }) {
          for (let i = 0; i < n; i += 1) yield { ticks: i };
        },
      },
      failing: {
        async *subscribe() {
          yield {};
        },
        resolve: (_: unknown, { token }: { token: string }) => {
          throw new GraphQLError('the stream ends here', { extensions: { resumeToken: token } });
        },
      },
      refused: {
        subscribe: () => {
          throw new GraphQLError('refused: `resumeToken` is not a token this gateway issued', {
            extensions: { code: 'BAD_USER_INPUT', argumentName: 'resumeToken' },
          });
        },
      },
      forever: {
        // Waits for an event that never comes, as a live subscription does between messages:
        // only return(), the client leaving, ends it.
        subscribe: (): AsyncIterableIterator<{ forever: number }> => {
          let sent = false;
          const iterator: AsyncIterableIterator<{ forever: number }> = {
            next: () =>
              sent
                ? new Promise(() => {})
                : ((sent = true), Promise.resolve({ done: false, value: { forever: 1 } })),
            return: () => {
              left();
              return Promise.resolve({ done: true, value: undefined });
            },
            [Symbol.asyncIterator]: () => iterator,
          };
          return iterator;
        },
      },
    },
  },
});

function yoga(live: { closing: boolean } | null = { closing: false }) {
  return createYoga({ schema, plugins: [useLiveResume(live)], logging: false });
}

async function sse(
  server: ReturnType<typeof yoga>,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ response: Response; text: string }> {
  const response = await server.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
  });
  return { response, text: await response.text() };
}

describe('useLiveResume over SSE', () => {
  it('opens with a comment, sends each result as `next`, and ends with `complete`', async () => {
    const { response, text } = await sse(yoga(), 'subscription { ticks(n: 2) }');
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(text).toBe(
      ':\n\n' +
        'event: next\ndata: {"data":{"ticks":0}}\n\n' +
        'event: next\ndata: {"data":{"ticks":1}}\n\n' +
        'event: complete\ndata:\n\n',
    );
  });

  it('ends without `complete` while the copy shuts down, so clients reconnect elsewhere', async () => {
    const { text } = await sse(yoga({ closing: true }), 'subscription { ticks(n: 1) }');
    expect(text).toBe(':\n\nevent: next\ndata: {"data":{"ticks":0}}\n\n');
  });

  it("gives an event its resume token as the SSE id, an error's included", async () => {
    const { text } = await sse(yoga(), 'subscription { failing(token: "tok-7") }');
    expect(text).toMatch(/^:\n\nid: tok-7\nevent: next\ndata: \{"errors":\[/);
    expect(text).toContain('"resumeToken":"tok-7"');
  });

  it('sends no id for a token with a line break, which would end the SSE field', async () => {
    const { text } = await sse(yoga(), 'subscription { failing(token: "tok\\nid: forged") }');
    expect(text).not.toMatch(/^id:/m);
    expect(text).toContain('event: next');
  });

  it('says a refused token came in the `Last-Event-ID` header when it did', async () => {
    const asArgument = await sse(yoga(), 'subscription { refused }');
    const viaHeader = await sse(yoga(), 'subscription { refused }', {
      'last-event-id': 'made-up',
    });
    const errorOf = (text: string) => {
      const data = /^data: (.*)$/m.exec(text)?.[1] ?? '{}';
      return (JSON.parse(data) as { errors: { message: string; extensions: unknown }[] }).errors[0];
    };
    expect(errorOf(asArgument.text)?.message).toContain('`resumeToken`');
    expect(errorOf(viaHeader.text)).toMatchObject({
      message: 'refused: the `Last-Event-ID` header is not a token this gateway issued',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(JSON.stringify(errorOf(viaHeader.text))).not.toContain('argumentName');
  });

  it('ends the subscription when the client leaves', async () => {
    const gone = subscriptionLeft();
    const abort = new AbortController();
    const response = await yoga().fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { forever }' }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('event: next')) {
      const { value } = await reader.read();
      received += decoder.decode(value);
    }
    abort.abort();
    await gone;
    await reader.cancel().catch(() => {});
  });
});

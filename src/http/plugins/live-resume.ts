/**
 * Each live result's resume token in `extensions.resumeToken` and as the SSE event's `id:`
 * (docs/live-updates.md). Shutdown sends no `event: complete` (final to clients); else yoga's framing.
 */
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { ErrorCode } from '../../core/errors.js';
import { takeResumeToken } from '../../graph/live.js';

const PING_MS = 12_000;

export function useLiveResume(live: { readonly closing: boolean } | null): Plugin {
  return {
    onSubscribe({ args }) {
      const context = args.contextValue as object;
      return {
        onSubscribeResult({ result, setResult }) {
          // A token from Last-Event-ID (which wins over the argument) is refused as the header.
          if (!isAsyncIterable(result) && result.errors?.length && lastEventId(context)) {
            setResult({ ...result, errors: result.errors.map(namingTheHeader) });
          }
          return {
            onNext({ result, setResult }) {
              const token = takeResumeToken(context);
              if (token === undefined) return;
              setResult({ ...result, extensions: { ...result.extensions, resumeToken: token } });
            },
          };
        },
      };
    },
    onResultProcess({ request, result, setResultProcessor }) {
      if (!isAsyncIterable(result)) return;
      if (!request.headers.get('accept')?.includes('text/event-stream')) return;
      setResultProcessor(
        (stream, fetchAPI) =>
          sseResponse(
            stream as AsyncIterable<ExecutionResult>,
            fetchAPI,
            () => live?.closing ?? false,
            request.signal,
          ),
        'text/event-stream',
      );
    },
  };
}

function sseResponse(
  results: AsyncIterable<ExecutionResult>,
  fetchAPI: { ReadableStream: typeof ReadableStream; Response: typeof Response },
  shuttingDown: () => boolean,
  signal: AbortSignal | undefined,
): Response {
  const encoder = new TextEncoder();
  const iterator = results[Symbol.asyncIterator]();
  let ping: NodeJS.Timeout | undefined;
  // The client left: end the subscription now (its resolver listens only once it has started).
  const left = (): void => {
    clearInterval(ping);
    void iterator.return?.();
  };
  if (signal?.aborted) queueMicrotask(left);
  else signal?.addEventListener('abort', left, { once: true });
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      // Some browsers wait for a first byte before they hand the stream over.
      controller.enqueue(encoder.encode(':\n\n'));
      ping = setInterval(() => {
        if (controller.desiredSize === null) clearInterval(ping);
        else if (controller.desiredSize > 0) controller.enqueue(encoder.encode(':\n\n'));
      }, PING_MS);
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (!next.done) {
          const id = resumeTokenOf(next.value);
          const idLine = id !== undefined ? `id: ${id}\n` : '';
          controller.enqueue(
            encoder.encode(`${idLine}event: next\ndata: ${JSON.stringify(next.value)}\n\n`),
          );
          return;
        }
        clearInterval(ping);
        // Shutting down: no `complete`, so clients reconnect (and resume) elsewhere.
        if (!shuttingDown()) controller.enqueue(encoder.encode('event: complete\ndata:\n\n'));
        controller.close();
      } catch (error) {
        clearInterval(ping);
        controller.error(error);
      }
    },
    async cancel() {
      clearInterval(ping);
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(body, {
    status: 200,
    headers: {
      'Content-Type': 'text/event-stream',
      Connection: 'keep-alive',
      'Cache-Control': 'no-cache',
      'Content-Encoding': 'none',
    },
  });
}

function lastEventId(context: object): boolean {
  const { request } = context as { request?: { headers?: { get?(name: string): string | null } } };
  return Boolean(request?.headers?.get?.('last-event-id'));
}

/** A refusal of the resume token, said of the `Last-Event-ID` header it came in. */
function namingTheHeader(error: GraphQLError): GraphQLError {
  const { argumentName, ...extensions } = error.extensions ?? {};
  const aboutToken =
    (error.extensions?.code === ErrorCode.BadUserInput && argumentName === 'resumeToken') ||
    (error.extensions?.code === ErrorCode.ResyncRequired &&
      error.message.includes('`resumeToken`'));
  if (!aboutToken) return error;
  const message = error.message.replaceAll('`resumeToken`', 'the `Last-Event-ID` header');
  return new GraphQLError(message, {
    nodes: error.nodes ?? null,
    source: error.source ?? null,
    positions: error.positions ?? null,
    path: error.path ?? null,
    originalError: error.originalError ?? null,
    extensions,
  });
}

/** The result's resume token (of an event, or of an error that ended the stream). */
function resumeTokenOf(result: ExecutionResult): string | undefined {
  const token = result.extensions?.resumeToken ?? result.errors?.[0]?.extensions?.resumeToken;
  // An SSE field ends at a line break: anything with one is not a token of ours.
  return typeof token === 'string' && !/[\r\n]/.test(token) ? token : undefined;
}

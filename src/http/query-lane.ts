/**
 * The plain-query lane (hand-written: the split is ours): a JSON POST of a query runs yoga's own
 * steps without the Fetch Request and Response around them, half of a small query's CPU
 * (docs/performance.md). Anything else is yoga's, its body handed back if read.
 *
 * One path for every configuration: what tracing, the response cache, APQ and an allow-list do
 * hangs on yoga's hook lists (a hit set in onParams, a query taken from a hash, a refusal thrown,
 * spans around execute, a stale answer set after it), so the lane runs those lists rather than a
 * copy of them: from the params on, yoga's getResultForParams (every onParams, its own parse,
 * validation and execution, every onExecutionResult) and its onResultProcess hooks. Of the
 * server adapter's hooks, which need a Fetch Request, only those of the `hooks` plugins run here:
 * the rest answer other routes, methods or headers (left to yoga below) or compress (done here).
 *
 * Whose a request is gets decided before any hook runs, so no hook runs twice. Invalid documents
 * and refusals are answered here by those same steps; what the lane cannot write is a stream (a
 * subscription, @defer, @stream), and a request only becomes one if its text says so or, its text
 * still to come from onParams (a persisted operation), if its Accept takes one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { TOKEN_HEADER_KEY } from 'graphql-sse';
import {
  isPromise,
  type GraphQLParams,
  type MaskError,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import type { NodeRequest } from '@whatwg-node/server';
import type { TicketedListener } from '../traffic/admitted-requests.js';
import { nodeHeaders, type Ticket, type Ticketed } from '../traffic/ticket.js';
import { appendVary } from './vary.js';
import {
  chooseEncoding,
  COMPRESSED_ENCODINGS,
  MIN_COMPRESSED_BYTES,
} from './plugins/compression.js';
import { GRAPHQL_PATH } from './paths.js';
import { serialiseInSlices } from './serialise-in-slices.js';

type ResultProcess = NonNullable<Plugin['onResultProcess']>;
type ProcessorInput = Parameters<ResultProcess>[0]['result'];
type Processor = Parameters<Parameters<ResultProcess>[0]['setResultProcessor']>[0];

/**
 * What the lane needs of yoga: its Node listener, its steps from the params on, and what its
 * handle uses after them; the hooks and the masking are private in yoga's types, read as they are.
 */
export interface LaneYoga extends Pick<
  YogaServerInstance<Ticketed, object>,
  'getResultForParams' | 'logger'
> {
  (request: IncomingMessage, response: ServerResponse, context: Ticketed): unknown;
  /** whatwg-node's Node listener, also taking a framework's request (Node's, its body read). */
  readonly requestListener: (...args: [NodeRequest, ServerResponse, Ticketed]) => unknown;
  readonly onResultProcessHooks: readonly ResultProcess[];
  readonly maskedErrorsOpts: {
    readonly maskError: MaskError;
    readonly errorMessage: string;
  } | null;
}

export interface QueryLaneOptions {
  readonly maxBodyBytes: number;
  /** The plugins whose server hooks (onRequest, onResponse) a query meets, in yoga's order. */
  readonly hooks: readonly Plugin[];
  /**
   * The text a persisted operation's params stand for, if known here and now: null when none
   * will be found (a refusal, never a stream), undefined when only onParams can tell.
   */
  readonly persistedText?: (params: GraphQLParams) => string | null | undefined;
}

/**
 * Whether yoga's processor for a single result takes one of the types `accept` lists, by yoga's
 * own reading (no q values; utf-8 only; wildcards); when it does, yoga picks it for any single
 * result (it is matched last), so no answer but a stream can be another processor's.
 */
function takesJson(accept: string | undefined): boolean {
  return (accept || '*/*')
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .some((entry) => {
      const [type = '', ...params] = entry.split(';');
      const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
      return charset === 'charset=utf-8' && SINGLE_RESULT_TYPES.test(type);
    });
}
const SINGLE_RESULT_TYPES = /^(\*|application)\/(\*|json|graphql-response\+json)$/;
/** An Accept a stream could answer (SSE, multipart), read loosely: a false alarm is only yoga's. */
const TAKES_PARTS = /\*\/|text\/|multipart\//i;
/** A text that could run as a stream; a false alarm (a comment, a field's name) is only yoga's. */
const STREAMS = /@(defer|stream)\b|\bsubscription\b/;
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);
const compress = { gzip: promisify(gzip), deflate: promisify(deflate) };
/** Answers the response budget sized past this are serialised a slice of the loop at a time. */
const SLICED_FROM_BYTES = 64 * 1024;

/** Captures what yoga's result processor would send, without a Fetch Response. */
class CapturedResponse {
  constructor(
    readonly body: string | null,
    readonly init: { status?: number; headers?: Record<string, string> },
  ) {}
}
const CAPTURE = { Response: CapturedResponse } as never;

type Hook = (payload: object) => unknown;

export function queryLane(yoga: LaneYoga, options: QueryLaneOptions): TicketedListener {
  const named = (name: 'onRequest' | 'onResponse') =>
    options.hooks.flatMap((plugin) => plugin[name] ?? []) as Hook[];
  const onRequest = named('onRequest');
  const onResponse = named('onResponse');
  const onResultProcess = yoga.onResultProcessHooks as readonly Hook[];
  /** yoga's handleError (not exported) for what a hook threw around execution. */
  const failed = (error: unknown): ExecutionResult => {
    const masking = yoga.maskedErrorsOpts;
    const masked = masking ? masking.maskError(error, masking.errorMessage) : error;
    if (masked !== error) yoga.logger.error(error);
    return { errors: [masked as GraphQLError] };
  };
  const run = async (
    request: IncomingMessage,
    response: ServerResponse,
    context: Ticketed & { ticket: Ticket },
    body: Buffer,
  ): Promise<void> => {
    const params = jsonObject(body);
    const replay = (): void => {
      // whatwg-node takes a pre-read `body` with own keys: a Buffer's are its bytes one by one
      // (the APQ flood's 95 KB bodies lost four fifths of its rate), so one key and the bytes.
      const preRead = { length: body.length, [Symbol.asyncIterator]: () => bytesOnce(body) };
      // Handed over as whatwg-node takes a framework's request (Node's as `req`, its body read,
      // the socket a stream sets up), Node's own request left as it came.
      const { method, headers, socket } = request;
      const asRead = { req: request, method, headers, socket, body: preRead };
      yoga.requestListener(asRead, response, context);
    };
    if (!params) return replay();
    const { accept } = request.headers;
    // An allow-listed client sends no text, and often no Accept (any type, a stream's too): its
    // text is looked up here, or it would take yoga's whole path (a fifth more CPU a request).
    const text = params.query ?? options.persistedText?.(params);
    // null: none will be found, so onParams refuses it (never a stream).
    const mayStream =
      text !== null && (text ? STREAMS.test(String(text)) : !accept || TAKES_PARTS.test(accept));
    if (mayStream) return replay();
    const view = requestView(request);
    // One object, as in yoga: the server context the hooks see becomes the operation's context.
    const serverContext = { ...context };
    const url = { pathname: GRAPHQL_PATH };
    let pending = callHooks(onRequest, { request: view, url, serverContext });
    if (pending) await pending;
    let result: ProcessorInput;
    try {
      const asked = { params, request: view as unknown as Request };
      result = (await yoga.getResultForParams(asked, serverContext)) as ProcessorInput;
    } catch (error) {
      result = failed(error);
    }
    let processor: Processor | undefined;
    let mediaType = '*/*';
    const acceptableMediaTypes: string[] = [];
    pending = callHooks(onResultProcess, {
      request: view,
      acceptableMediaTypes,
      serverContext,
      get result() {
        return result;
      },
      setResult: (next: ProcessorInput) => void (result = next),
      setResultProcessor: (next: Processor, type: string) =>
        void ((processor = next), (mediaType = type)),
    });
    if (pending) await pending;
    // A large answer: yoga's processor gives status and headers, its stringifier hands over
    // the result it would have written (internals already left out), sliced below instead.
    let large: unknown;
    const budget = (serverContext as { responseBudget?: { spent: number } }).responseBudget;
    if ((budget?.spent ?? 0) >= SLICED_FROM_BYTES) {
      result = Object.assign({}, result, {
        stringify: (sanitised: unknown) => ((large = sanitised), ''),
      });
    }
    // The single-result processor (the checks above leave no other), or none: yoga's 406.
    const answer = (processor
      ? await processor(result, CAPTURE, mediaType)
      : new CapturedResponse(null, {
          status: 406,
          headers: { accept: acceptableMediaTypes.join('; charset=utf-8, ') },
        })) as unknown as CapturedResponse;
    let pieces = large ? await serialiseInSlices(large) : [Buffer.from(answer.body ?? '')];
    const headers = new HeaderList(answer.init.headers);
    const out = { status: answer.init.status ?? 200, headers };
    let length = byteLength(pieces);
    if (length >= MIN_COMPRESSED_BYTES) {
      appendVary(headers, 'Accept-Encoding');
      const encoding = chooseEncoding(view.headers.get('accept-encoding'), COMPRESSED_ENCODINGS);
      if (encoding) {
        pieces = [await compress[encoding](Buffer.concat(pieces, length))];
        length = byteLength(pieces);
        headers.set('content-encoding', encoding);
      }
    }
    headers.set('content-length', String(length));
    pending = callHooks(onResponse, { request: view, response: out, serverContext });
    if (pending) await pending;
    if (response.destroyed) return;
    response.writeHead(out.status, headers.toObject());
    // Piece by piece as the socket drains (one writev of 2.3 MB held the loop 16 ms); a client
    // gone meanwhile ends the pipeline, its error already the connection's.
    if (pieces.length === 1) response.end(pieces[0]);
    else pipeline(Readable.from(pieces, { objectMode: false }), response, () => undefined);
  };

  return (request, response, context) => {
    const length = Number(request.headers['content-length']);
    const eligible =
      request.method === 'POST' &&
      request.url === GRAPHQL_PATH &&
      length > 0 &&
      length <= options.maxBodyBytes &&
      JSON_TYPES.has(request.headers['content-type']?.toLowerCase() ?? '') &&
      takesJson(request.headers.accept) &&
      request.headers.origin === undefined &&
      // What an onRequest hook answers (an SSE stream's operation): yoga's.
      request.headers[TOKEN_HEADER_KEY] === undefined &&
      context.ticket.refusal === undefined;
    if (!eligible) {
      yoga(request, response, context);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      run(request, response, context, Buffer.concat(chunks)).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
        else response.destroy();
      });
    });
  };
}

/** The body as params, any JSON object (yoga's onParams checks its fields); else null, yoga's. */
function jsonObject(body: Buffer): GraphQLParams | null {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null;
}

/** The parts of a Fetch Request that the hooks and plugins read, over Node's request. */
function requestView(request: IncomingMessage) {
  return {
    method: 'POST',
    url: `http://${request.headers.host ?? 'localhost'}${GRAPHQL_PATH}`,
    headers: nodeHeaders(request.headers),
  };
}

/** Each hook in order, as yoga calls them; waited for only if one returns a promise. */
function callHooks(hooks: readonly Hook[], payload: object, from = 0): Promise<void> | undefined {
  for (let i = from; i < hooks.length; i += 1) {
    const pending = hooks[i]?.(payload);
    if (isPromise(pending)) return pending.then(() => callHooks(hooks, payload, i + 1));
  }
  return undefined;
}

/** A response's headers as the hooks read and set them, without a Fetch Headers per request. */
class HeaderList {
  private readonly values = new Map<string, string>();
  constructor(init: Record<string, string> = {}) {
    for (const name in init) this.values.set(name.toLowerCase(), init[name] as string);
  }
  get(name: string): string | null {
    return this.values.get(name.toLowerCase()) ?? null;
  }
  set(name: string, value: string): void {
    this.values.set(name.toLowerCase(), value);
  }
  delete(name: string): void {
    this.values.delete(name.toLowerCase());
  }
  toObject(): Record<string, string> {
    return Object.fromEntries(this.values);
  }
}

const byteLength = (pieces: readonly Buffer[]): number =>
  pieces.reduce((sum, piece) => sum + piece.length, 0);

async function* bytesOnce(body: Buffer): AsyncGenerator<Buffer> {
  yield body;
}

/**
 * The plain-query lane (hand-written: the split is ours): a JSON POST of a query runs yoga's own
 * envelop and result processor without the Fetch Request and Response around them, half of a
 * small query's CPU (docs/performance.md). Anything else is yoga's, its body handed back if read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import { getOperationAST, type ExecutionResult } from 'graphql';
import {
  isPromise,
  processRegularResult,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
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

/** What the lane needs of yoga: its envelop and its Node listener. */
export interface LaneYoga extends Pick<YogaServerInstance<Ticketed, object>, 'getEnveloped'> {
  (request: IncomingMessage, response: ServerResponse, context: Ticketed): unknown;
}

export interface QueryLaneOptions {
  readonly maxBodyBytes: number;
  /** The plugins whose HTTP hooks (onRequest, onParams, onResultProcess, onResponse) a plain query meets. */
  readonly hooks: readonly Plugin[];
}

/** The media types of yoga's processor for a single result (its others stream). */
const SINGLE_RESULT_TYPES = ['application/graphql-response+json', 'application/json'];

/**
 * The media type yoga answers a single result with for this `Accept`, by its own reading (no q
 * values; utf-8 only; of the types the client lists, its processor's last match wins, and the
 * single-result processor is matched last); null when it would pick another processor.
 */
function singleResultType(accept: string | undefined): string | null {
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',');
  let chosen: string | null = null;
  for (const entry of asked.reverse()) {
    const [type = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [family, subtype] = type.split('/');
    for (const offered of SINGLE_RESULT_TYPES) {
      const [offeredFamily, offeredSubtype] = offered.split('/');
      const familyMatches = family === '*' || family === offeredFamily;
      if (familyMatches && (subtype === '*' || subtype === offeredSubtype)) chosen = offered;
    }
  }
  return chosen;
}
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);
const INCREMENTAL = /@(defer|stream)\b/;
const compress = { gzip: promisify(gzip), deflate: promisify(deflate) };
/** Answers the response budget sized past this are serialised a slice of the loop at a time. */
const SLICED_FROM_BYTES = 64 * 1024;

interface PlainParams {
  readonly query: string;
  readonly operationName?: string | null;
  readonly variables?: Record<string, unknown> | null;
}

/** Captures what yoga's result processor would send, without a Fetch Response. */
class CapturedResponse {
  constructor(
    readonly body: string | null,
    readonly init: { status?: number; headers?: Record<string, string> },
  ) {}
}
const CAPTURE = { Response: CapturedResponse } as never;

export function queryLane(yoga: LaneYoga, options: QueryLaneOptions): TicketedListener {
  const hooks = options.hooks;
  const run = async (
    request: IncomingMessage,
    response: ServerResponse,
    context: Ticketed & { ticket: Ticket },
    body: Buffer,
    mediaType: string,
  ): Promise<void> => {
    const params = plainParams(body);
    const replay = (): void => {
      // whatwg-node takes a pre-read `body` with own keys: a Buffer's are its bytes one by one
      // (the APQ flood's 95 KB bodies lost four fifths of its rate), so one key and the bytes.
      const preRead = { length: body.length, [Symbol.asyncIterator]: () => bytesOnce(body) };
      (request as IncomingMessage & { body?: unknown }).body = preRead;
      yoga(request, response, context);
    };
    if (!params || INCREMENTAL.test(params.query)) return replay();
    const view = requestView(request);
    const initial = { ...context, request: view, params };
    const enveloped = yoga.getEnveloped(initial);
    let document: unknown;
    try {
      document = enveloped.parse(params.query);
    } catch {
      return replay();
    }
    const operation = getOperationAST(document as never, params.operationName);
    if (operation?.operation !== 'query' || enveloped.validate(enveloped.schema, document).length) {
      return replay();
    }
    const url = { pathname: GRAPHQL_PATH };
    let pending = callHooks(hooks, 'onRequest', { request: view, url, serverContext: context });
    if (pending) await pending;
    pending = callHooks(hooks, 'onParams', { request: view, params });
    if (pending) await pending;
    let contextValue = enveloped.contextFactory();
    if (isPromise(contextValue)) contextValue = await contextValue;
    let result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      contextValue,
      variableValues: params.variables,
      operationName: params.operationName,
    })) as ExecutionResult;
    const setResult = (next: ExecutionResult): void => {
      result = next;
    };
    pending = callHooks(hooks, 'onResultProcess', { request: view, result, setResult });
    if (pending) await pending;
    // A large answer: yoga's processor gives status and headers, its stringifier hands over
    // the result it would have written (internals already left out), sliced below instead.
    let large: unknown;
    const budget = (contextValue as { responseBudget?: { spent: number } }).responseBudget;
    if ((budget?.spent ?? 0) >= SLICED_FROM_BYTES) {
      result = Object.assign({}, result, {
        stringify: (sanitised: unknown) => ((large = sanitised), ''),
      });
    }
    const answer = processRegularResult(result, CAPTURE, mediaType) as unknown as CapturedResponse;
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
    pending = callHooks(hooks, 'onResponse', {
      request: view,
      response: out,
      serverContext: context,
    });
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
    const mediaType = singleResultType(request.headers.accept);
    const eligible =
      request.method === 'POST' &&
      request.url === GRAPHQL_PATH &&
      length > 0 &&
      length <= options.maxBodyBytes &&
      JSON_TYPES.has(request.headers['content-type']?.toLowerCase() ?? '') &&
      mediaType !== null &&
      request.headers.origin === undefined &&
      context.ticket.refusal === undefined;
    if (!eligible) {
      yoga(request, response, context);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      run(request, response, context, Buffer.concat(chunks), mediaType).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
        else response.destroy();
      });
    });
  };
}

/** The body as query, operationName and variables, or null for anything else (yoga's to answer). */
function plainParams(body: Buffer): PlainParams | null {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const params = value as Record<string, unknown>;
  for (const key in params) {
    const field = params[key];
    const plain =
      key === 'query'
        ? typeof field === 'string'
        : key === 'operationName'
          ? field === null || typeof field === 'string'
          : key === 'variables' &&
            (field === null || (typeof field === 'object' && !Array.isArray(field)));
    if (!plain) return null;
  }
  return typeof params.query === 'string' ? (params as unknown as PlainParams) : null;
}

/** The parts of a Fetch Request that the hooks and plugins read, over Node's request. */
function requestView(request: IncomingMessage) {
  return {
    method: 'POST',
    url: `http://${request.headers.host ?? 'localhost'}${GRAPHQL_PATH}`,
    headers: nodeHeaders(request.headers),
  };
}

type HttpHook = 'onRequest' | 'onParams' | 'onResultProcess' | 'onResponse';

/** One HTTP hook of each plugin in order, as yoga calls them; waited for only if it returns a promise. */
function callHooks(
  hooks: readonly Plugin[],
  name: HttpHook,
  payload: object,
): Promise<void> | undefined {
  for (let i = 0; i < hooks.length; i += 1) {
    const hook = hooks[i]?.[name] as ((payload: object) => unknown) | undefined;
    const pending = hook?.(payload);
    if (isPromise(pending)) return pending.then(() => callHooks(hooks.slice(i + 1), name, payload));
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
  toObject(): Record<string, string> {
    return Object.fromEntries(this.values);
  }
}

const byteLength = (pieces: readonly Buffer[]): number =>
  pieces.reduce((sum, piece) => sum + piece.length, 0);

async function* bytesOnce(body: Buffer): AsyncGenerator<Buffer> {
  yield body;
}

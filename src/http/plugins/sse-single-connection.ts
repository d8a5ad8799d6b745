/**
 * graphql-sse's "single connection mode" (docs/live-updates.md); a reservation holds a slot of
 * `held`. Shutdown ends streams without `complete`, so clients retry. Tokenless non-PUTs are yoga's.
 */
import { randomUUID } from 'node:crypto';
import { getOperationAST, GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import {
  createHandler,
  TOKEN_HEADER_KEY,
  TOKEN_QUERY_KEY,
  type Response as Answer,
} from 'graphql-sse';
import { isAsyncIterable, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Credentials } from '../../core/credentials.js';
import type { Identity } from '../../core/identity.js';
import { ticketOf, type Ticket } from '../../traffic/ticket.js';
import type { HeldStreams } from '../../traffic/held-streams.js';
import { ErrorCode } from '../../core/errors.js';
import { SUBSCRIPTION_LIMIT } from '../../live/hub.js';
import { GRAPHQL_PATH } from '../paths.js';
import { parseValid } from '../websocket.js';

/** How long a reserved stream waits for its `GET` before it is dropped. */
export const RESERVATION_TTL_MS = 30_000;

export interface SseSingleConnectionOptions {
  readonly held: HeldStreams;
  /** Whether the service accepts these credentials (memory first, else one shared call). */
  readonly verify: (credentials: Credentials) => Promise<boolean>;
  readonly maxOperationsPerStream: number;
  readonly reservationTtlMs?: number;
  /** Live updates (LiveHub): its close() ends every stream first. None: queries only. */
  readonly live: { readonly closing: boolean; onClose(listener: () => void): void } | null;
}

interface Reservation {
  /** The pair that reserved it. */
  readonly owner: string;
  readonly release: () => void;
  operations: number;
  /** Cleared once the stream is opened. */
  readonly expiry: NodeJS.Timeout;
  /** Ends the stream while it is open. */
  end?: () => void;
}

type Enveloped = YogaServerInstance<Record<string, never>, Record<string, unknown>>;
type FetchAPI = Pick<typeof globalThis, 'Response' | 'ReadableStream' | 'TextEncoder'>;

export function useSseSingleConnection(options: SseSingleConnectionOptions): Plugin {
  const reservations = new Map<string, Reservation>();
  // The library's own handler, which takes each request's ticket as its context (its fetch
  // adapter would pass the Request alone).
  let core: ((request: Request, ticket?: Ticket) => Promise<Answer>) | undefined;
  let fetchAPI: FetchAPI | undefined;

  const forget = (token: string): void => {
    const reservation = reservations.get(token);
    if (!reservation) return;
    clearTimeout(reservation.expiry);
    reservation.release();
    reservations.delete(token);
  };

  /** Drops a reservation that was never opened: the library frees a stream once it is read. */
  const expire = async (token: string): Promise<void> => {
    if (!reservations.has(token) || !core) return;
    forget(token);
    const opening = new Request(`http://gateway.internal${GRAPHQL_PATH}`, {
      headers: { accept: 'text/event-stream', [TOKEN_HEADER_KEY]: token },
    });
    const [parts] = await core(opening);
    if (typeof parts === 'object') await parts?.return(undefined);
  };

  // Shutdown: every open stream ends before the live subscriptions do, so no `complete` is sent.
  options.live?.onClose(() => {
    for (const reservation of [...reservations.values()]) reservation.end?.();
  });

  return {
    onYogaInit({ yoga }) {
      fetchAPI = yoga.fetchAPI;
      const enveloped = yoga as unknown as Enveloped;
      // A PUT is issued a new token, which its answer carries.
      const handler = createHandler<Request, Ticket | undefined>({
        authenticate: (req) => (req.method === 'PUT' ? randomUUID() : tokenOf(req.raw)),
        onSubscribe: async (req, params) => {
          const request = req.raw;
          const reservation = reservations.get(tokenOf(request) ?? '');
          if (reservation && reservation.operations >= options.maxOperationsPerStream) {
            return once({
              errors: [
                new GraphQLError(
                  `This stream already runs ${options.maxOperationsPerStream} subscriptions, the most allowed; stop one first`,
                  { extensions: { code: SUBSCRIPTION_LIMIT } },
                ),
              ],
            });
          }
          const { schema, parse, validate, contextFactory, execute, subscribe } =
            enveloped.getEnveloped({ request, params, ticket: req.context });
          const document = parseValid(parse, validate, schema, params.query);
          if (Array.isArray(document)) return once({ errors: document });
          const args: ExecutionArgs = {
            schema,
            document,
            contextValue: await contextFactory(),
            variableValues: params.variables ?? null,
            operationName: params.operationName ?? null,
          };
          const operation = getOperationAST(document, params.operationName)?.operation;
          const result = (await (operation === 'subscription'
            ? subscribe(args)
            : execute(args))) as ExecutionResult | AsyncIterable<ExecutionResult>;
          if (!isAsyncIterable(result)) return result.data === undefined ? once(result) : result;
          return reservation ? counted(result, reservation) : result;
        },
      });
      core = (raw, context) => {
        const { method, url, headers } = raw;
        return handler({ method, url, headers, body: () => raw.text(), raw, context });
      };
    },
    onRequest({ request, endResponse, serverContext }) {
      if (!core || !fetchAPI) return;
      const token = tokenOf(request);
      if (request.method !== 'PUT' && token === null) return;
      if (new URL(request.url).pathname !== GRAPHQL_PATH) return;
      const ticket = ticketOf(serverContext);
      const { identity } = ticket;
      const api = fetchAPI;
      const refuse = (status: number, message: string, code?: string): void =>
        endResponse(
          api.Response.json(
            { errors: [{ message, ...(code ? { extensions: { code } } : {}) }] },
            { status },
          ),
        );
      if (identity.kind !== 'present')
        return refuse(
          401,
          'Credentials required on every request of a stream: Authorization: Basic base64(sys_id:auth_token), or X-Sys-Id with X-Auth-Token',
          ErrorCode.Unauthenticated,
        );
      if (request.method === 'PUT') return reserve(request, ticket, identity, refuse, endResponse);
      const reservation = reservations.get(token ?? '');
      if (!reservation || token === null)
        return refuse(
          404,
          'No such event stream: reserve one with PUT first (it lasts while it is open)',
        );
      if (reservation.owner !== identity.pair)
        return refuse(
          403,
          'This event stream was reserved with other credentials: send the same credentials on every request of a stream',
        );
      return core(request, ticket).then(([body, init]) => {
        if (typeof body === 'string' || !body) return endResponse(new api.Response(body, init));
        endResponse(openStream(token, reservation, body, init, api, request.signal));
      });
    },
  };

  /** A stream for credentials the service accepts (invented ones would hold slots for free). */
  async function reserve(
    request: Request,
    ticket: Ticket,
    identity: Extract<Identity, { kind: 'present' }>,
    refuse: (status: number, message: string, code?: string) => void,
    endResponse: (response: Response) => void,
  ): Promise<void> {
    if (!core || !fetchAPI) return;
    if (options.live?.closing)
      return refuse(503, 'This gateway copy is shutting down; reserve the stream again (any copy)');
    const accepted = await options.verify(identity.credentials).catch(() => null);
    if (accepted === null) {
      const message = 'The SMS service could not check the credentials; try again shortly';
      return refuse(503, message, ErrorCode.UpstreamUnavailable);
    }
    if (!accepted)
      return refuse(401, 'The SMS service refused the credentials', ErrorCode.Unauthenticated);
    const slot = options.held.hold(identity.account);
    if (typeof slot !== 'function') {
      const full = slot === 'account-full';
      return refuse(
        full ? 429 : 503,
        options.held.message(slot),
        full ? SUBSCRIPTION_LIMIT : undefined,
      );
    }
    const [token, init] = await core(request, ticket);
    if (init.status !== 201 || typeof token !== 'string') slot();
    else {
      const ttl = options.reservationTtlMs ?? RESERVATION_TTL_MS;
      const expiry = setTimeout(() => void expire(token), ttl).unref();
      reservations.set(token, { owner: identity.pair, release: slot, operations: 0, expiry });
    }
    endResponse(new fetchAPI.Response(typeof token === 'string' ? token : null, init));
  }

  /**
   * The stream's response, ended by us on shutdown or when its client leaves (as graphql-sse's
   * fetch adapter does); its end frees the reservation.
   */
  function openStream(
    token: string,
    reservation: Reservation,
    parts: AsyncGenerator<string, void>,
    init: ResponseInit,
    api: FetchAPI,
    left: AbortSignal,
  ): Response {
    clearTimeout(reservation.expiry);
    const encoder = new api.TextEncoder();
    let ended = false;
    const stop = (controller: ReadableStreamDefaultController<Uint8Array>): void => {
      ended = true;
      forget(token);
      controller.close();
    };
    const body = new api.ReadableStream<Uint8Array>({
      start(controller) {
        reservation.end = () => {
          if (ended) return;
          stop(controller);
          void parts.return(undefined).catch(() => undefined);
        };
        const leave = (): void => reservation.end?.();
        if (left.aborted) leave();
        else left.addEventListener('abort', leave, { once: true });
      },
      async pull(controller) {
        const next = await parts.next().catch(() => ({ done: true as const, value: undefined }));
        if (ended) return;
        if (!next.done) return controller.enqueue(encoder.encode(next.value));
        stop(controller);
      },
      async cancel() {
        ended = true;
        forget(token);
        await parts.return(undefined).catch(() => undefined);
      },
    });
    return new api.Response(body, init);
  }
}

/** The stream token a request carries, in the header or the query string. */
function tokenOf(request: Request): string | null {
  const header = request.headers.get(TOKEN_HEADER_KEY);
  if (header) return header;
  const index = request.url.indexOf('?');
  if (index < 0) return null;
  return new URLSearchParams(request.url.slice(index + 1)).get(TOKEN_QUERY_KEY) || null;
}

/** A result as a stream of one: graphql-sse takes an object without `data` for execution args. */
async function* once(result: ExecutionResult): AsyncGenerator<ExecutionResult> {
  yield result;
}

/** Counted against its stream while it runs; no async generator, whose return() waits an event. */
function counted(
  results: AsyncIterable<ExecutionResult>,
  reservation: { operations: number },
): AsyncGenerator<ExecutionResult> {
  const inner = results[Symbol.asyncIterator]();
  reservation.operations += 1;
  let running = true;
  const finish = (): void => {
    if (running) reservation.operations -= 1;
    running = false;
  };
  const iterator: AsyncGenerator<ExecutionResult> = {
    async next() {
      const next = await inner.next();
      if (next.done) finish();
      return next;
    },
    async return(value) {
      finish();
      return (await inner.return?.(value)) ?? { done: true, value };
    },
    async throw(error: unknown) {
      finish();
      if (inner.throw) return inner.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/**
 * A real HTTP server on 127.0.0.1 whose every answer a test scripts: for failure modes the
 * simulator does not have (5xx, HTML pages, hangs, resets, malformed JSON, one number failing).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedCall {
  readonly operation: string;
  readonly params: URLSearchParams;
}

export type ScriptedReply =
  | {
      readonly status?: number;
      readonly json: unknown;
      readonly delayMs?: number;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      readonly status?: number;
      readonly text: string;
      readonly contentType?: string;
      readonly delayMs?: number;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** Never answers; the socket stays open until the server closes. */
  | { readonly hang: true }
  /** Destroys the connection without an answer (a reset). */
  | { readonly reset: true }
  /** Promises a 1000-byte JSON body, sends part of it, then drops the connection. */
  | { readonly cutOff: true }
  /** Holds the answer until `until` settles: lets a test observe what happens meanwhile. */
  | { readonly until: Promise<unknown>; readonly reply: ScriptedReply };

export type Script = (call: ScriptedCall) => ScriptedReply;

export interface ScriptedUpstream {
  readonly url: string;
  readonly calls: ScriptedCall[];
  close(): Promise<void>;
}

export async function startScriptedUpstream(script: Script): Promise<ScriptedUpstream> {
  const calls: ScriptedCall[] = [];
  const server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        const call = {
          operation: (req.url ?? '').replace(/^.*\/api\//, '').replace(/\?.*$/, ''),
          params: new URLSearchParams(body),
        };
        calls.push(call);
        reply(script(call), req, res);
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function reply(scripted: ScriptedReply, req: IncomingMessage, res: ServerResponse): void {
  if ('hang' in scripted) return;
  if ('until' in scripted) {
    void scripted.until.then(() => reply(scripted.reply, req, res));
    return;
  }
  if ('reset' in scripted) {
    req.socket.destroy();
    return;
  }
  if ('cutOff' in scripted) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"success":"1","data":[{"number":"1');
    setTimeout(() => req.socket.destroy(), 20);
    return;
  }
  const send = () => {
    const isJson = 'json' in scripted;
    res.writeHead(scripted.status ?? 200, {
      'content-type': isJson ? 'application/json' : (scripted.contentType ?? 'text/html'),
      ...scripted.headers,
    });
    res.end(isJson ? JSON.stringify(scripted.json) : scripted.text);
  };
  if (scripted.delayMs) setTimeout(send, scripted.delayMs);
  else send();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A minimal successful owned-numbers answer. */
export function ownedNumbersReply(tids: readonly string[]): ScriptedReply {
  return {
    json: {
      success: '1',
      data: tids.map((tid, i) => ({
        number: `1512555${String(1000 + i)}`,
        tid,
        type: i % 2 ? 'tollfree' : 'local',
        webhook: '',
      })),
    },
  };
}

/** A minimal successful history answer for the call's tid and number. */
export function historyReply(call: ScriptedCall): ScriptedReply {
  const tid = call.params.get('tid') ?? '';
  return {
    json: {
      success: '1',
      'message_count_requested ': 1,
      total_message_count: 1,
      created_date: '2026-01-01 00:00:00',
      most_recent_msg_id: 5,
      most_recent_date: '2026-01-02 00:00:00',
      tid,
      number: call.params.get('number'),
      optin: 'yes',
      messages: [
        {
          system_id: 5,
          message_id: 'a'.repeat(32),
          GMTdate: '2026-01-02 00:00:00',
          tid,
          phone: '15550000000',
          direction: 'outbound',
          body: `hello from ${tid}`,
          mms: 'no',
          mms_url: '',
          status: '200 Message delivered',
        },
      ],
    },
  };
}

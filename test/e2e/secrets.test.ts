/**
 * Credentials never reach logs or answers: a real gateway process, debug logging, an upstream
 * that fails in every way, and requests carrying distinctive secrets in both header styles.
 * All of the process's output is captured and searched for the secrets and their encodings.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  historyReply,
  ownedNumbersReply,
  startScriptedUpstream,
  type ScriptedReply,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';
import { spawnGateway } from '../../support/gateway-process.js';

const SYS_ID = 'AC-sysid-Q7RX2';
const TOKEN = 'tok-S3CR3T-9f8e7d';
// The gateway's own secrets (GATEWAY_SECRET and the previous one of a rotation) must not leak either.
const GATEWAY_SECRET = 'gw-S3CR3T-current-0123456789abcdef';
const GATEWAY_SECRET_PREVIOUS = 'gw-S3CR3T-previous-0123456789abcdef';
const secrets = [
  SYS_ID,
  TOKEN,
  GATEWAY_SECRET,
  GATEWAY_SECRET_PREVIOUS,
  Buffer.from(`${SYS_ID}:${TOKEN}`).toString('base64'),
  Buffer.from(TOKEN).toString('base64'),
  encodeURIComponent(TOKEN),
];

const faults: ScriptedReply[] = [
  { status: 500, text: `upstream stack trace auth_token=${TOKEN}` },
  { reset: true },
  { status: 502, text: '<html>bad gateway</html>' },
  { json: { success: '0', error: `bad token ${TOKEN}` } },
  { status: 401, text: '' },
  { hang: true },
  { text: '{"success":"1","total', contentType: 'application/json' },
  { cutOff: true },
];

let upstream: ScriptedUpstream;
let output = '';
let answers = '';
beforeAll(async () => {
  let n = 0;
  upstream = await startScriptedUpstream((call) => {
    n += 1;
    if (call.operation !== 'smshistory')
      return n % 3 === 0
        ? (faults[n % faults.length] as ScriptedReply)
        : ownedNumbersReply(['A', 'B', 'C']);
    return n % 4 === 0 ? historyReply(call) : (faults[n % faults.length] as ScriptedReply);
  });
  // The built process, as `npm start` runs it; its whole output is kept, not only the banner.
  const child = spawnGateway({
    env: {
      UPSTREAM_URL: upstream.url,
      UPSTREAM_TIMEOUT_MS: '200',
      LOG_LEVEL: 'debug',
      GATEWAY_SECRET,
      GATEWAY_SECRET_PREVIOUS,
    },
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const endpoint = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 15_000);
    child.stderr?.on('data', () => {
      const match = /on (http:\/\/\S+\/graphql)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });

  const headerSets: Record<string, string>[] = [
    { authorization: `Basic ${Buffer.from(`${SYS_ID}:${TOKEN}`).toString('base64')}` },
    { 'x-sys-id': SYS_ID, 'x-auth-token': TOKEN },
    { authorization: `Bearer ${TOKEN}` },
    { 'x-auth-token': TOKEN },
    { authorization: `Basic ${Buffer.from(`${SYS_ID}:${TOKEN}\u0001`).toString('base64')}` },
  ];
  const query = '{ ownedNumbers { tid history(start: 0, end: 2) { totalCount messages { id } } } }';
  for (let round = 0; round < 6; round += 1) {
    await Promise.all(
      headerSets.map(async (headers) => {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({
            query,
            variables: { note: `variables may echo, headers must not` },
          }),
        });
        answers += await response.text();
      }),
    );
    // Nothing to wait for between rounds: each ends with all its answers in, and the process
    // writes its last log lines before it exits (awaited below).
  }
  child.kill('SIGTERM');
  await once(child, 'exit');
}, 60_000);
afterAll(() => upstream.close());

describe('secrets', () => {
  it('the run exercised failures and logged them', () => {
    expect(upstream.calls.length).toBeGreaterThan(20);
    // The upstream really received the credentials (so they were there to leak).
    expect(upstream.calls.some((c) => c.params.get('auth_token') === TOKEN)).toBe(true);
    for (const code of ['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UNAUTHENTICATED'])
      expect(answers).toContain(code);
    expect(output).toMatch(/"level":40/);
    expect(output).toMatch(/retrying/);
  });

  it.each(secrets.map((s) => [s]))('never writes %s to any log line or answer', (secret) => {
    expect(output).not.toContain(secret);
    expect(answers).not.toContain(secret);
  });
});

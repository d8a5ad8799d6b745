/**
 * The doorbell's route over a real socket: `Number.doorbellUrl` rings (202, no body, no
 * credentials), anything forged is 404 and costs no poll, other methods 405, and a body past the
 * limit 413 without being read, declared or not.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { liveStacks, type LiveStack } from '../fixtures/live-stack.js';
import { sleep, until } from '../../support/wait.js';

const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id } }';
/**
 * Far longer than any wait here: no regular poll falls inside a test, so a delivery proves the
 * ring caused it (no elapsed-time check that a busy machine could fail).
 */
const POLL_MS = 60_000;

const stacks = liveStacks();
const servers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

/** A live gateway listening on 127.0.0.1, and its origin. */
async function listening(ringGapMs = 50): Promise<{ s: LiveStack; origin: string }> {
  const s = await stacks.start(
    { 'AC-1': ['T-A', 'T-B'] },
    { live: { pollMs: POLL_MS, ringGapMs } },
  );
  const { server } = s.test.app;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { s, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** What `Number.doorbellUrl` says for each of the account's numbers. */
async function doorbellUrls(s: LiveStack): Promise<Record<string, string>> {
  const response = await s.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ONE },
    body: JSON.stringify({ query: '{ ownedNumbers { tid doorbellUrl } }' }),
  });
  const { data } = (await response.json()) as {
    data: { ownedNumbers: Array<{ tid: string; doorbellUrl: string }> };
  };
  return Object.fromEntries(data.ownedNumbers.map((n) => [n.tid, n.doorbellUrl]));
}

async function firstLook(s: LiveStack): Promise<void> {
  await until(() => s.upstream.callsOf('smshistory') >= 1 && s.hub.stats.locksHeld === 1);
  await sleep(200);
}

const ids = (s: { events: Array<{ data?: Record<string, unknown> | null }> }) =>
  s.events.map((e) => (e.data?.messageAdded as { id: string }).id);

describe('POST /hooks/ring/<tid>/<signature>', () => {
  it('rings with Number.doorbellUrl, whatever the body: one poll, delivered well within LIVE_POLL_MS', async () => {
    const { s, origin } = await listening();
    const urls = await doorbellUrls(s);
    // No GATEWAY_PUBLIC_URL: the path, to append to the gateway's public address.
    expect(urls['T-A']).toMatch(/^\/hooks\/ring\/T-A\/[A-Za-z0-9_-]{22}$/);
    expect(urls['T-B']).not.toBe(urls['T-A']);
    const stream = await s.open(ON_A, ONE);
    await firstLook(s);
    const before = s.upstream.callsOf('smshistory');
    const added = s.upstream.add('T-A', 1);
    const response = await fetch(`${origin}${urls['T-A']}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"not": "even", "read"',
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
    await stream.waitFor(1, 2_000);
    await sleep(200);
    expect(s.upstream.callsOf('smshistory') - before).toBe(1);
    expect(ids(stream)).toEqual(added);
  });

  it('answers a forged ring 404 with nothing in it, and polls nothing', async () => {
    const { s, origin } = await listening();
    const urls = await doorbellUrls(s);
    await s.open(ON_A, ONE);
    await firstLook(s);
    const before = s.upstream.callsOf('smshistory');
    const signature = urls['T-A']!.split('/').at(-1)!;
    const forged = [
      `/hooks/ring/T-A/${'A'.repeat(22)}`,
      `/hooks/ring/T-B/${signature}`, // another number's signature
      `/hooks/ring/T-A/${signature.slice(1)}`,
      `/hooks/ring/T-A/${signature}/more`,
      '/hooks/ring/T-A',
      '/hooks/ring/%E0%A4%A/x',
    ];
    for (const path of forged) {
      const response = await fetch(`${origin}${path}`, { method: 'POST', body: 'x' });
      expect(response.status, path).toBe(404);
      expect(await response.text()).toBe('');
    }
    const get = await fetch(`${origin}${urls['T-A']}`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    await sleep(300);
    expect(s.upstream.callsOf('smshistory')).toBe(before);
  });

  it('refuses a body over 4 KiB with 413 at once, declared or streamed, and polls nothing', async () => {
    const { s, origin } = await listening();
    const urls = await doorbellUrls(s);
    await s.open(ON_A, ONE);
    await firstLook(s);
    const before = s.upstream.callsOf('smshistory');
    const declared = await fetch(`${origin}${urls['T-A']}`, {
      method: 'POST',
      body: 'x'.repeat(5_000),
      signal: AbortSignal.timeout(3_000),
    });
    expect(declared.status).toBe(413);

    // Chunked, with no length: refused once past the limit, though the client never finishes.
    const url = new URL(`${origin}${urls['T-A']}`);
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(url, { method: 'POST' }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.setTimeout(3_000, () => reject(new Error('the ring hung')));
      request.write('x'.repeat(8_192)); // and never end()
    });
    expect(status).toBe(413);

    // At the limit is a ring.
    const atLimit = await fetch(url, { method: 'POST', body: 'x'.repeat(4_096) });
    expect(atLimit.status).toBe(202);
    await until(() => s.upstream.callsOf('smshistory') === before + 1, 2_000);
  });
});

/**
 * Release N reads what release N-1 wrote and accepts what it issued (docs/upgrading.md): Redis as
 * the previous release left it (test/fixtures/previous-release/written-by-previous.json, written by
 * its built process), restored into a real redis-server, and this release's app on it with the same
 * GATEWAY_SECRET. Hashes registered before the upgrade are found (apq:v1, carried over sealed to
 * apq:v2); its cached answers (in clear, under its key) are hits, never rewritten; its cursors page
 * on; its resume tokens are accepted, under GATEWAY_SECRET_PREVIOUS too.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { createApp } from '../src/start.js';
import { APQ_KEY_PREFIX, APQ_V1_KEY_PREFIX } from '../src/cache/apq-store.js';
import { CACHE_KEY_PREFIX } from '../src/cache/response-cache.js';
import { loadConfig } from '../src/config/config.js';
import { createCursorCodec } from '../src/graph/cursors.js';
import { decodeResumeToken } from '../src/graph/resume-tokens.js';
import { startRedis, type RunningRedis } from './fixtures/redis.js';

interface Fixture {
  readonly commit: string;
  readonly secret: string;
  readonly credentials: { readonly sysId: string; readonly authToken: string };
  readonly apq: { readonly query: string; readonly hash: string };
  readonly cache: { readonly query: string; readonly answer: { data?: unknown } };
  readonly cursor: {
    readonly tid: string;
    readonly query: string;
    readonly cursor: string;
    readonly nextPage: unknown;
  };
  readonly resumeToken: string;
  readonly redis: readonly { key: string; valueBase64: string }[];
}

const FIXTURE = JSON.parse(
  readFileSync(
    new URL('./fixtures/previous-release/written-by-previous.json', import.meta.url),
    'utf8',
  ),
) as Fixture;
const AUTH = {
  authorization: `Basic ${Buffer.from(`${FIXTURE.credentials.sysId}:${FIXTURE.credentials.authToken}`).toString('base64')}`,
};

let redis: RunningRedis;
let admin: Redis;
let app: App;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
  // As the previous release left them, with a day to live (the recorded ones count down from then).
  for (const { key, valueBase64 } of FIXTURE.redis) {
    await admin.set(key, Buffer.from(valueBase64, 'base64'), 'EX', 86_400);
  }
  // Its cached answer of FIXTURE.cache.query, stored just now (the header's storedAt) and marked,
  // so an answer that carries the mark came from that entry and not from the service.
  const cached = cachedEntry();
  const [header, json] = splitOnce(cached.value, '\n');
  const marked = json.replace(/"number":"(\d+)"/, `"number":"${MARK}"`);
  expect(marked).not.toBe(json);
  const fresh = JSON.stringify({ ...JSON.parse(header), storedAt: Date.now() });
  await admin.set(cached.key, `${fresh}\n${marked}`, 'EX', 600);
  const config = loadConfig({
    REDIS_URL: redis.url,
    GATEWAY_SECRET: FIXTURE.secret,
    CACHE_TTL_MS: '60000',
    LIVE_POLL_MS: '0',
  });
  app = await createApp(config, { logger: false });
}, 30_000);

afterAll(async () => {
  await app?.close();
  admin?.disconnect();
  await redis?.close();
});

const MARK = 'stored-by-the-previous-release';

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return [text.slice(0, at), text.slice(at + separator.length)];
}

/** The previous release's entry holding FIXTURE.cache.query's answer (its JSON, in clear). */
function cachedEntry(): { key: string; value: string } {
  const data = JSON.stringify(FIXTURE.cache.answer.data);
  const entries = FIXTURE.redis
    .filter(({ key }) => key.startsWith(CACHE_KEY_PREFIX))
    .map(({ key, valueBase64 }) => ({ key, value: Buffer.from(valueBase64, 'base64').toString() }))
    .filter(({ value }) => JSON.stringify(JSON.parse(splitOnce(value, '\n')[1]).data) === data);
  expect(entries).toHaveLength(1);
  return entries[0]!;
}

async function post(body: object) {
  const response = await app.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...AUTH },
    body: JSON.stringify(body),
  });
  return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
}

describe(`what the previous release (${FIXTURE.commit.slice(0, 7)}) wrote and issued`, () => {
  it('holds an apq:v1 registration (the fixture is what it says)', async () => {
    expect(await admin.get(APQ_V1_KEY_PREFIX + FIXTURE.apq.hash)).toBe(FIXTURE.apq.query);
  });

  it('a hash registered with it runs here, and is carried over sealed under apq:v2', async () => {
    const persisted = { persistedQuery: { version: 1, sha256Hash: FIXTURE.apq.hash } };
    const byHash = await post({ extensions: persisted });
    expect(byHash.errors).toBeUndefined();
    expect(byHash.data).toEqual(await post({ query: FIXTURE.apq.query }).then((r) => r.data));
    const carried = (await admin.getBuffer(APQ_KEY_PREFIX + FIXTURE.apq.hash)) as Buffer | null;
    expect(carried).not.toBeNull();
    expect(carried!.toString('latin1')).not.toContain('ownedNumbers');
    // The next read is v2's: with v1 gone the hash still runs.
    await admin.del(APQ_V1_KEY_PREFIX + FIXTURE.apq.hash);
    expect((await post({ extensions: persisted })).data).toEqual(byHash.data);
  });

  it('an apq:v1 text that is not what its hash names is a miss, never run', async () => {
    const hash = 'a'.repeat(64);
    await admin.set(APQ_V1_KEY_PREFIX + hash, FIXTURE.apq.query, 'EX', 60);
    const answer = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(answer.errors?.[0]?.message).toBe('PersistedQueryNotFound');
    expect(await admin.exists(APQ_KEY_PREFIX + hash)).toBe(0);
  });

  it('its cached answer is a hit here, and stays as it wrote it', async () => {
    const { key } = cachedEntry();
    const before = await admin.get(key);
    const answer = await post({ query: FIXTURE.cache.query });
    expect(JSON.stringify(answer)).toContain(MARK);
    expect(answer).toEqual(
      JSON.parse(
        JSON.stringify(FIXTURE.cache.answer).replace(/"number":"\d+"/, `"number":"${MARK}"`),
      ),
    );
    // Read, never rewritten: copies of the previous release still read it as it was.
    expect(await admin.get(key)).toBe(before);
  });

  it("another account's request does not reach it", async () => {
    const response = await app.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from('AC-demo-0002:demo-token-2b8e41').toString('base64')}`,
      },
      body: JSON.stringify({ query: FIXTURE.cache.query }),
    });
    expect(await response.text()).not.toContain(MARK);
  });

  it('its cursor pages on: the page after it is the page it answered', async () => {
    const { tid, query, cursor, nextPage } = FIXTURE.cursor;
    type Page = {
      data?: { number?: { messages?: { edges?: { cursor: string; node: unknown }[] } } };
    };
    const edges = (page: unknown) => (page as Page).data?.number?.messages?.edges ?? [];
    const answered = edges(await post({ query, variables: { tid, after: cursor } }));
    // The same messages; their cursors are this release's (they carry the number: one call a page).
    expect(answered.map((edge) => edge.node)).toEqual(edges(nextPage).map((edge) => edge.node));
    expect(answered.length).toBeGreaterThan(0);
  });

  it('its resume token is accepted, under GATEWAY_SECRET and as GATEWAY_SECRET_PREVIOUS', () => {
    const current = decodeResumeToken(createCursorCodec(FIXTURE.secret), FIXTURE.resumeToken);
    expect(current).toBeInstanceOf(Map);
    expect([...(current as Map<string, unknown>).keys()]).toHaveLength(1);
    const rotated = createCursorCodec('a-rotated-secret-0123456789abcdef0123', FIXTURE.secret);
    expect(decodeResumeToken(rotated, FIXTURE.resumeToken)).toEqual(current);
    // Not vacuous: a key that never signed it refuses it.
    const stranger = createCursorCodec('a-stranger-secret-0123456789abcdef012');
    expect(decodeResumeToken(stranger, FIXTURE.resumeToken)).toBe('unknown-key');
  });
});

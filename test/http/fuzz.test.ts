/**
 * Property tests (fast-check): random documents, variables and header values. The gateway
 * never answers 5xx, never throws, and never calls the upstream without well-formed
 * credentials — and when it does call, it sends exactly the credentials the request carried.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';
import {
  accountScript,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';

let upstream: ScriptedUpstream;
let test: TestGateway;
beforeAll(async () => {
  upstream = await startScriptedUpstream(accountScript(['A', 'B']));
  test = createTestGateway(upstream.url, { limits: { maxCost: 2_000 } });
});
afterAll(async () => {
  await test.close();
  await upstream.close();
});

const WELL_FORMED = /^[\x21-\x7e]{1,512}$/;
const headerText = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
const fieldNames = [
  'ownedNumbers',
  'number',
  'history',
  'tid',
  'messages',
  'status',
  'code',
  'type',
  '__typename',
  '__schema',
  '_entities',
  'nope',
];
const tokens = fc.constantFrom(
  ...fieldNames,
  '{',
  '}',
  '(',
  ')',
  ':',
  '$v',
  '...',
  'on',
  'Number',
  'query',
  'fragment',
  'F',
  '@include(if: true)',
  '@skip(if: $v)',
  'type: LOCAL',
  'start: 0',
  'end: 5',
  'start: -1',
  'tid: "A"',
  'end: 99999',
  '"',
  '#',
  ',',
  'a:',
  '\n',
);
const documents = fc.oneof(
  fc.array(tokens, { maxLength: 60 }).map((parts) => parts.join(' ')),
  fc.string({ maxLength: 200 }),
  fc.constant('{ ownedNumbers { tid history(start: 0, end: 2) { messages { id } } } }'),
);
const headers = fc.record(
  {
    authorization: fc.oneof(
      headerText,
      headerText.map((t) => `Basic ${Buffer.from(t).toString('base64')}`),
      fc.constant('Basic QUM6dG9r'),
    ),
    'x-sys-id': headerText,
    'x-auth-token': headerText,
  },
  { requiredKeys: [] },
);

/** What the gateway may legitimately send upstream for these headers: the pair it read, if any. */
function sentCredentials(h: Record<string, string>): { sysId: string; authToken: string }[] {
  const found: { sysId: string; authToken: string }[] = [];
  const basic = /^Basic\s+(\S+)\s*$/i.exec(h.authorization?.trim() ?? '');
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0)
      found.push({ sysId: decoded.slice(0, colon), authToken: decoded.slice(colon + 1) });
  }
  if (h['x-sys-id'] !== undefined && h['x-auth-token'] !== undefined) {
    found.push({ sysId: h['x-sys-id'].trim(), authToken: h['x-auth-token'].trim() });
  }
  return found;
}

describe('fuzzing', () => {
  it('never answers 5xx, and only calls upstream with well-formed credentials the request carried', async () => {
    await fc.assert(
      fc.asyncProperty(
        documents,
        fc.jsonValue({ maxDepth: 2 }),
        headers,
        fc.boolean(),
        async (query, variables, h, useGet) => {
          const before = upstream.calls.length;
          const response = useGet
            ? await test.gateway.fetch(
                `http://gateway.test/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify(variables))}`,
                {
                  headers: { accept: 'application/graphql-response+json', ...h },
                },
              )
            : await test.gateway.fetch('http://gateway.test/graphql', {
                method: 'POST',
                headers: {
                  'content-type': 'application/json',
                  accept: 'application/graphql-response+json',
                  ...h,
                },
                body: JSON.stringify({ query, variables }),
              });
          expect(response.status).toBeLessThan(500);
          const body = (await response.json()) as { errors?: unknown[]; data?: unknown };
          expect(body.errors !== undefined || body.data !== undefined).toBe(true);
          const allowed = sentCredentials(h);
          for (const call of upstream.calls.slice(before)) {
            const sysId = call.params.get('sys_id') ?? '';
            const authToken = call.params.get('auth_token') ?? '';
            expect(sysId).toMatch(WELL_FORMED);
            expect(authToken).toMatch(WELL_FORMED);
            expect(allowed).toContainEqual({ sysId, authToken });
          }
        },
      ),
      { numRuns: 400 },
    );
    // The property is vacuous unless some runs did reach the upstream.
    expect(upstream.calls.length).toBeGreaterThan(0);
  });

  it('adversarial variable values never cause a 5xx', async () => {
    const query =
      'query($tid: ID!, $s: Int!, $e: Int!, $t: NumberType) { number(tid: $tid) { history(start: $s, end: $e) { totalCount } } ownedNumbers(type: $t) { tid } }';
    await fc.assert(
      fc.asyncProperty(
        fc.record({ tid: fc.jsonValue(), s: fc.jsonValue(), e: fc.jsonValue(), t: fc.jsonValue() }),
        async (variables) => {
          const body = JSON.stringify({ query, variables });
          const response = await test.gateway.fetch('http://gateway.test/graphql', {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-sys-id': 'AC',
              'x-auth-token': 'tok',
            },
            body,
          });
          expect(response.status).toBeLessThan(500);
          await response.json();
        },
      ),
      { numRuns: 200 },
    );
  });
});

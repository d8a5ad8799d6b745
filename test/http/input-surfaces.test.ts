/**
 * Surfaces that cost in proportion to what they are asked: no request body is echoed in an
 * error; GraphiQL is compressed once per encoding (test/http/graphiql.test.ts has the rest).
 * APQ's part is in test/http/plugins/apq.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { postBody, sharedStack } from '../fixtures/harness.js';

const metrics = createMetrics();
const stack = sharedStack({}, { metrics });
const post = (body: string, headers: Record<string, string> = {}) =>
  postBody(stack.gateway, body, headers);

describe('errors', () => {
  it('never echo the request body (invalid JSON)', async () => {
    const response = await post('{"query": "{ x }", "secret": SECRET-TOKEN-123');
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).not.toContain('SECRET-TOKEN-123');
    expect(JSON.parse(text)).toEqual({
      errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }],
    });
  });
});

describe('GraphiQL', () => {
  it.each(['gzip', 'br'])('is compressed with %s once and kept', async (encoding) => {
    const visit = async () => {
      const response = await stack.gateway.fetch('http://gateway.test/graphql', {
        headers: { accept: 'text/html', 'accept-encoding': encoding },
      });
      const body = Buffer.from(await response.arrayBuffer());
      return { response, body };
    };
    const first = await visit();
    expect(first.response.headers.get('content-encoding')).toBe(encoding);
    const second = await visit();
    // The same bytes: the kept compression, not a new one.
    expect(second.body.equals(first.body)).toBe(true);
  });
});

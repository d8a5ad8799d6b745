/** The upstream client (src/upstream/client.ts): reading a 429's Retry-After. */
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/upstream/client.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['Mon, 23 Nov 2026 10:00:30 GMT', 30_000],
    ['Mon, 23 Nov 2026 09:00:00 GMT', 0],
    ['soon', null],
    ['-5', null],
    ['', null],
    [undefined, null],
  ])('%s -> %s ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

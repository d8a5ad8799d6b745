/** The request id: a caller's plain one kept, anything else replaced. */
import { describe, expect, it } from 'vitest';
import { requestIdFor, REQUEST_ID_HEADER } from '../../src/observability/request-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const idFor = (given?: string) =>
  requestIdFor(new Headers(given === undefined ? {} : { [REQUEST_ID_HEADER]: given }));

describe('requestIdFor', () => {
  it("keeps a caller's short, plain id, so a trace across services lines up", () => {
    expect(idFor('edge-7f3a.1:42')).toBe('edge-7f3a.1:42');
  });

  it('replaces an id that could forge log structure or is too long, and makes one when none', () => {
    for (const bad of ['a b', 'x"}{"level":50', 'x'.repeat(129), '']) {
      expect(idFor(bad)).toMatch(UUID);
    }
    expect(idFor()).toMatch(UUID);
    expect(idFor()).not.toBe(idFor());
  });
});

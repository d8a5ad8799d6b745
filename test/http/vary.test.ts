/** Vary: a name added once, whatever the case it is already listed in. */
import { describe, expect, it } from 'vitest';
import { appendVary } from '../../src/http/vary.js';

describe('appendVary', () => {
  it('sets it when absent, appends it to others, and never lists it twice', () => {
    const headers = new Headers();
    appendVary(headers, 'Origin');
    expect(headers.get('vary')).toBe('Origin');
    appendVary(headers, 'Accept-Encoding');
    expect(headers.get('vary')).toBe('Origin, Accept-Encoding');
    appendVary(headers, 'accept-encoding');
    appendVary(headers, 'ORIGIN');
    expect(headers.get('vary')).toBe('Origin, Accept-Encoding');
  });
});

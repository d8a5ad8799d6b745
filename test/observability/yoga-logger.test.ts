/** yoga's per-request debug chatter costs nothing unless debug is on. */
import { describe, expect, it } from 'vitest';
import { createLogger, yogaLogger } from '../../src/observability/logger.js';

describe('yoga logger', () => {
  it("does not even format yoga's debug lines unless debug is on", () => {
    let formatted = 0;
    const chatter = { toString: () => `${++formatted}` };
    const written: string[] = [];
    const destination = { write: (line: string) => void written.push(line) };
    yogaLogger(createLogger('info', destination)).debug('Processing GraphQL Parameters', chatter);
    expect(formatted).toBe(0);
    yogaLogger(createLogger('debug', destination)).debug('Processing GraphQL Parameters', chatter);
    expect(formatted).toBe(1);
    expect(written.join('')).toContain('Processing GraphQL Parameters 1');
  });
});

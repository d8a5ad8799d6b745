/**
 * The redact list as a second line of defence: the general logger censors credential keys at the
 * top and one level down; the request-line logger (named fields only) censors them at the top.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, requestLineLogger, yogaLogger } from '../../src/observability/logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', {
    write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
}

const TOKEN = 'tok-never-logged';

describe('log redaction', () => {
  it('censors credentials at the top of an object and one level down', () => {
    const { logger, lines } = capture();
    logger.info({
      authToken: TOKEN,
      call: { auth_token: TOKEN, credentials: { authToken: TOKEN } },
    });
    logger.info({ headers: { authorization: `Basic ${TOKEN}`, 'x-auth-token': TOKEN } });
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(lines[0]).toMatchObject({ authToken: '[redacted]', call: { auth_token: '[redacted]' } });
  });

  it('request lines keep the top-level censoring, and their own fields as they are', () => {
    const { logger, lines } = capture();
    const requests = requestLineLogger(logger);
    requests.info(
      { requestId: 'r-1', status: 200, account: 'acct-id', authorization: TOKEN },
      'request',
    );
    requests.info({ headers: { 'x-auth-token': TOKEN }, sysId: 'AC-1' }, 'request');
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(lines[0]).toMatchObject({
      requestId: 'r-1',
      status: 200,
      account: 'acct-id',
      authorization: '[redacted]',
      msg: 'request',
    });
    expect(lines[1]).toMatchObject({ sysId: '[redacted]' });
  });
});

/** yoga's per-request debug chatter costs nothing unless debug is on. */
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

import { createHmac, randomBytes } from 'node:crypto';

/** The account credentials a request carries; forwarded upstream as `sys_id` / `auth_token`. */
export interface Credentials {
  readonly sysId: string;
  readonly authToken: string;
}

export type CredentialsResult =
  | { readonly kind: 'present'; readonly credentials: Credentials }
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed'; readonly reason: string };

/** Longest sys_id or auth_token accepted; anything longer is refused before any upstream call. */
const MAX_PART_LENGTH = 512;
// Printable ASCII without spaces: keeps header smuggling and control characters out of form bodies.
const SAFE_PART = /^[\x21-\x7e]+$/;

/**
 * Reads credentials from `Authorization: Basic base64(sys_id:auth_token)` or from the pair
 * `X-Sys-Id` / `X-Auth-Token`. Never throws and never includes a secret in `reason`: missing
 * credentials are a normal state (introspection, GraphiQL) and are refused only by fields
 * that need the upstream. The gateway reads them through Identities (identity.ts), which keeps
 * each reading with the names derived from it.
 */
export function readCredentials(headers: Pick<Headers, 'get'>): CredentialsResult {
  if (
    headers.get('authorization') === null &&
    headers.get('x-sys-id') === null &&
    headers.get('x-auth-token') === null
  )
    return MISSING;
  return read(headers);
}

const MISSING: CredentialsResult = { kind: 'missing' };

function read(headers: Pick<Headers, 'get'>): CredentialsResult {
  const fromBasic = readBasic(headers.get('authorization'));
  const fromPair = readPair(headers.get('x-sys-id'), headers.get('x-auth-token'));
  if (fromBasic.kind === 'malformed') return fromBasic;
  if (fromPair.kind === 'malformed') return fromPair;
  if (fromBasic.kind === 'present' && fromPair.kind === 'present') {
    const same =
      fromBasic.credentials.sysId === fromPair.credentials.sysId &&
      fromBasic.credentials.authToken === fromPair.credentials.authToken;
    // Two different accounts in one request is ambiguous; refusing is the only safe answer.
    return same
      ? fromBasic
      : {
          kind: 'malformed',
          reason: 'Authorization and X-Sys-Id/X-Auth-Token name different credentials',
        };
  }
  return fromBasic.kind === 'present' ? fromBasic : fromPair;
}

function readBasic(header: string | null): CredentialsResult {
  if (header === null || header.trim() === '') return { kind: 'missing' };
  const match = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header.trim());
  if (!match?.[1]) {
    return {
      kind: 'malformed',
      reason: 'Authorization header must be "Basic " followed by base64(sys_id:auth_token)',
    };
  }
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) {
    return { kind: 'malformed', reason: 'Basic credentials must have the form sys_id:auth_token' };
  }
  return validated(decoded.slice(0, colon), decoded.slice(colon + 1), 'Basic credentials');
}

function readPair(sysId: string | null, authToken: string | null): CredentialsResult {
  if (sysId === null && authToken === null) return { kind: 'missing' };
  if (sysId === null || authToken === null) {
    return { kind: 'malformed', reason: 'X-Sys-Id and X-Auth-Token must be sent together' };
  }
  return validated(sysId.trim(), authToken.trim(), 'X-Sys-Id/X-Auth-Token');
}

function validated(sysId: string, authToken: string, source: string): CredentialsResult {
  for (const [name, value] of [
    ['sys_id', sysId],
    ['auth_token', authToken],
  ] as const) {
    if (value === '') return { kind: 'malformed', reason: `${source}: ${name} is empty` };
    if (value.length > MAX_PART_LENGTH) {
      return {
        kind: 'malformed',
        reason: `${source}: ${name} is longer than ${MAX_PART_LENGTH} characters`,
      };
    }
    if (!SAFE_PART.test(value)) {
      return {
        kind: 'malformed',
        reason: `${source}: ${name} contains characters that are not printable ASCII`,
      };
    }
  }
  return { kind: 'present', credentials: { sysId, authToken } };
}

/**
 * An HMAC of the credentials (and of `scope`, e.g. a tid) under `key`: a name for an account that
 * is not its credentials and cannot be turned back into them. Parts are joined by NUL, which
 * usable credentials never contain, so ("a", "bc") and ("ab", "c") differ.
 */
export function credentialsHmac(
  key: Buffer | string,
  credentials: Credentials,
  ...scope: readonly string[]
): string {
  const hmac = createHmac('sha256', key)
    .update(credentials.sysId)
    .update('\u0000')
    .update(credentials.authToken);
  for (const part of scope) hmac.update('\u0000').update(part);
  return hmac.digest('base64url');
}

/**
 * One random key per process, the only one: used wherever no secret is configured (GATEWAY_SECRET;
 * loadConfig gives demo mode a fixed one). Every part of this process (traffic, cache, live,
 * logs, cursors) then names an account and signs alike, and no two processes do, which is all a
 * process-local name needs; cursors and resume tokens then end with the process.
 */
const PROCESS_KEY = randomBytes(32);

/** The configured secret, or this process's random key when none is set. */
export function fingerprintKey(secret: string | Buffer | null | undefined): Buffer | string {
  return secret ?? PROCESS_KEY;
}

/**
 * Who an account is: a keyed hash of its sys_id alone (HMAC-SHA256, 22 base64url characters).
 * Everything kept per account (breakers, 429 windows, fair share, subscription caps, cache share)
 * is keyed by it, so inventing tokens for one sys_id makes no new account; it is also the
 * pseudonymous account id in logs, the same on every copy and across restarts when the secret is
 * set. Answers are still scoped to the exact credential pair (`credentialsHmac`).
 */
export function accountId(key: Buffer | string, sysId: string): string {
  return createHmac('sha256', key)
    .update('account\u0000')
    .update(sysId)
    .digest('base64url')
    .slice(0, 22);
}

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

const MISSING: CredentialsResult = { kind: 'missing' };

function malformed(reason: string): CredentialsResult {
  return { kind: 'malformed', reason };
}

/**
 * Reads `Authorization: Basic base64(sys_id:auth_token)` or `X-Sys-Id` / `X-Auth-Token`. Never
 * throws, never puts a secret in `reason`. The gateway reads them through Identities.
 */
export function readCredentials(headers: Pick<Headers, 'get'>): CredentialsResult {
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
      : malformed('Authorization and X-Sys-Id/X-Auth-Token name different credentials');
  }
  return fromBasic.kind === 'present' ? fromBasic : fromPair;
}

function readBasic(header: string | null): CredentialsResult {
  if (header === null || header.trim() === '') return MISSING;
  const match = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header.trim());
  if (!match?.[1]) {
    return malformed('Authorization header must be "Basic " followed by base64(sys_id:auth_token)');
  }
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return malformed('Basic credentials must have the form sys_id:auth_token');
  return validated(decoded.slice(0, colon), decoded.slice(colon + 1), 'Basic credentials');
}

function readPair(sysId: string | null, authToken: string | null): CredentialsResult {
  if (sysId === null && authToken === null) return MISSING;
  if (sysId === null || authToken === null) {
    return malformed('X-Sys-Id and X-Auth-Token must be sent together');
  }
  return validated(sysId.trim(), authToken.trim(), 'X-Sys-Id/X-Auth-Token');
}

function validated(sysId: string, authToken: string, source: string): CredentialsResult {
  const problem = partProblem('sys_id', sysId) ?? partProblem('auth_token', authToken);
  if (problem) return malformed(`${source}: ${problem}`);
  return { kind: 'present', credentials: { sysId, authToken } };
}

function partProblem(name: string, value: string): string | null {
  if (value === '') return `${name} is empty`;
  if (value.length > MAX_PART_LENGTH) return `${name} is longer than ${MAX_PART_LENGTH} characters`;
  if (!SAFE_PART.test(value)) return `${name} contains characters that are not printable ASCII`;
  return null;
}

/**
 * An HMAC of the credentials (and `scope`, e.g. a tid) under `key`. Parts are joined by NUL, which
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

/** The key wherever no GATEWAY_SECRET is set: shared by the process's parts, no two processes. */
const PROCESS_KEY = randomBytes(32);

export function fingerprintKey(secret: string | Buffer | null | undefined): Buffer | string {
  return secret ?? PROCESS_KEY;
}

/** Who an account is: a keyed hash of its sys_id alone, so new tokens make no new account. */
export function accountId(key: Buffer | string, sysId: string): string {
  return createHmac('sha256', key)
    .update('account\u0000')
    .update(sysId)
    .digest('base64url')
    .slice(0, 22);
}

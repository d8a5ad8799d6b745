/**
 * Sealing what the gateway writes to Redis (docs/cache.md): AES-256-GCM under an HKDF-SHA256 key of
 * GATEWAY_SECRET, bound to its Redis key or channel (the AAD), so a value moved elsewhere no longer
 * opens; GATEWAY_SECRET_PREVIOUS's too. Anything else opens as null, which callers treat as a miss.
 * Layout: version (1 byte, 1) | nonce (12) | ciphertext | tag (16).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { fingerprintKey } from '../core/credentials.js';
import type { Logger } from '../observability/logger.js';

const INFO = 'sms-gateway redis seal v1';
const VERSION = Buffer.from([1]);
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface SealSecret {
  /** GATEWAY_SECRET; null: this process's own key (then nothing sealed opens in another). */
  readonly current: string | null;
  /** GATEWAY_SECRET_PREVIOUS: what it sealed still opens. @default null */
  readonly previous?: string | null;
}

export type Seal = ReturnType<typeof createSeal>;

export function createSeal(secret: SealSecret) {
  const current = deriveKey(secret.current);
  const previous = secret.previous ? deriveKey(secret.previous) : null;
  const keys = previous && !previous.equals(current) ? [current, previous] : [current];
  return {
    /** `plain` sealed under the current key, for `context` (the Redis key or channel it goes to). */
    seal(plain: string, context: string): Buffer {
      const nonce = nextNonce();
      const cipher = createCipheriv('aes-256-gcm', current, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context));
      const body = [cipher.update(plain, 'utf8'), cipher.final()];
      return Buffer.concat([VERSION, nonce, ...body, cipher.getAuthTag()]);
    },
    /** What was sealed for `context` under the current or previous key; null if neither opens it. */
    open(sealed: Buffer, context: string): string | null {
      if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== VERSION[0]) return null;
      const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
      const body = sealed.subarray(1 + NONCE_BYTES, sealed.length - TAG_BYTES);
      const tag = sealed.subarray(sealed.length - TAG_BYTES);
      for (const key of keys) {
        const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
        decipher.setAuthTag(tag);
        decipher.setAAD(Buffer.from(context));
        const plain = decipher.update(body);
        try {
          // Throws unless the tag matches: another key, or altered bytes. GCM adds nothing here.
          decipher.final();
        } catch {
          continue;
        }
        return plain.toString('utf8');
      }
      return null;
    },
  };
}

/** `seal.open`, with `warning` logged the first time something does not open (a miss to callers). */
export function openWarningOnce(seal: Seal, logger: Logger | false | undefined, warning: string) {
  let warned = false;
  return (sealed: Buffer, context: string): string | null => {
    const opened = seal.open(sealed, context);
    if (opened === null && logger && !warned) {
      warned = true;
      logger.warn(warning);
    }
    return opened;
  };
}

/** Nonces are public, so drawn 256 at a time: one per call was a third of sealing a live event. */
let nonces = Buffer.alloc(0);
let taken = 0;
function nextNonce(): Buffer {
  if (taken + NONCE_BYTES > nonces.length) {
    nonces = randomBytes(NONCE_BYTES * 256);
    taken = 0;
  }
  taken += NONCE_BYTES;
  return nonces.subarray(taken - NONCE_BYTES, taken);
}

function deriveKey(secret: string | null): Buffer {
  return Buffer.from(hkdfSync('sha256', fingerprintKey(secret), Buffer.alloc(0), INFO, 32));
}

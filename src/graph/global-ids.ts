/**
 * Global ids for `Node`: a Number's is base64("Number:<tid>"); a Message's the service's own 32-hex
 * message id, unchanged (base64 of "Number:" is never 32 hex characters, so they cannot collide).
 */
import { badUserInput } from '../core/errors.js';

const MESSAGE_ID = /^[0-9a-fA-F]{32}$/;
const MAX_ID_LENGTH = 512;

export function encodeGlobalId(typename: string, id: bigint | number | string): string {
  if (typename === 'Message') return String(id);
  return Buffer.from(`${typename}:${String(id)}`, 'utf8').toString('base64');
}

/** The type and raw id an id names; BAD_USER_INPUT for anything this gateway did not issue. */
export function decodeGlobalId(globalId: string): { typename: string; id: string } {
  if (MESSAGE_ID.test(globalId)) return { typename: 'Message', id: globalId };
  const refuse = () =>
    badUserInput(
      `"${globalId.slice(0, 64)}" is not an id this gateway issued: pass a Number's or a Message's \`id\` unchanged`,
      'id',
    );
  if (globalId.length > MAX_ID_LENGTH) throw refuse();
  const bytes = Buffer.from(globalId, 'base64');
  // Buffer skips what is not base64; a strict round trip refuses such input.
  if (bytes.length === 0 || bytes.toString('base64') !== globalId) throw refuse();
  const text = bytes.toString('utf8');
  const colon = text.indexOf(':');
  const typename = text.slice(0, colon);
  const id = text.slice(colon + 1);
  if (colon < 0 || typename !== 'Number' || id === '') throw refuse();
  return { typename, id };
}

/** The id of the request being served, on its response, log line and warnings. */
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

// A caller's id is kept when it is short and plain (so it can't forge log structure), else replaced.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER);
  return given !== null && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

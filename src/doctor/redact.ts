/**
 * The last guard before anything the doctor writes leaves the process: the account's sys_id and
 * token are replaced in every form an error text the service echoes could carry them (as sent,
 * form- or URL-encoded, base64 alone or as the Basic pair).
 */
export const REDACTED = '[redacted]';

/** Shorter values would also match ordinary text; no real sys_id or token is this short. */
const MIN_SECRET_LENGTH = 4;

export function createRedactor(secrets: readonly string[]): (text: string) => string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(new URLSearchParams({ v: secret }).toString().slice(2));
    forms.add(Buffer.from(secret).toString('base64'));
    forms.add(Buffer.from(secret).toString('base64url'));
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  const [sysId, authToken] = secrets;
  if (sysId && authToken) forms.add(Buffer.from(`${sysId}:${authToken}`).toString('base64'));
  // Longest first, so a form containing another is replaced whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const form of ordered) out = out.split(form).join(REDACTED);
    return out;
  };
}

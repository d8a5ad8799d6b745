/**
 * The last guard before anything the doctor writes leaves the process: the account's sys_id and
 * token, in every form a service or a report could carry them (as sent, form- or URL-encoded,
 * base64 alone or as the Basic pair), are replaced. Nothing should ever contain them (findings
 * hold shapes and counts, not bodies), but an error text the service echoes could.
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
  const ordered = [...forms]
    .filter((f) => f.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const form of ordered) out = out.split(form).join(REDACTED);
    return out;
  };
}

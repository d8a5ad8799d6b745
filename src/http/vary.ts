/** Adds `name` to a response's `Vary` header unless it is already listed (any case). */
export function appendVary(headers: Pick<Headers, 'get' | 'set'>, name: string): void {
  const current = headers.get('vary');
  if (!current) headers.set('vary', name);
  else if (!current.split(',').some((v) => v.trim().toLowerCase() === name.toLowerCase())) {
    headers.set('vary', `${current}, ${name}`);
  }
}

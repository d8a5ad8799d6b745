/**
 * A large answer's JSON, byte for byte what JSON.stringify gives, made a slice of the loop at a
 * time (hand-written: the stringifiers we know of run to the end in one turn). Measured on the
 * soak's `alias-histories-half`: one 2.3 MB answer held the loop 40-60 ms in one piece, and every
 * other request waited behind it.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Containers this deep or deeper are stringified whole: a message, an edge, a number's history. */
const SPLIT_DEPTH = 4;
/** Text gathered before it becomes one Buffer: past glibc's mmap threshold (128 KiB), so freed pieces go back
 * to the system (64 KiB pieces grew the soak flood's RSS by 25-40 MB more). */
const PIECE_CHARS = 256 * 1024;

/** `value` as JSON, in Buffers, yielding the loop once each `sliceMs` of work. */
export async function serialiseInSlices(value: unknown, sliceMs = 2): Promise<Buffer[]> {
  const pieces: Buffer[] = [];
  let parts: string[] = [];
  let chars = 0;
  let sliceStart = performance.now();
  const emit = (text: string): void => {
    parts.push(text);
    chars += text.length;
    if (chars >= PIECE_CHARS) flush();
  };
  const flush = (): void => {
    if (parts.length > 0) pieces.push(Buffer.from(parts.join('')));
    parts = [];
    chars = 0;
  };
  const write = async (node: unknown, depth: number): Promise<void> => {
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
    if (depth >= SPLIT_DEPTH || !isPlainContainer(node)) {
      emit(JSON.stringify(node) ?? 'null');
      return;
    }
    if (Array.isArray(node)) {
      emit('[');
      for (let i = 0; i < node.length; i += 1) {
        if (i > 0) emit(',');
        const item: unknown = node[i];
        if (isOmitted(item)) emit('null');
        else await write(item, depth + 1);
      }
      emit(']');
      return;
    }
    emit('{');
    let first = true;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const field = record[key];
      if (isOmitted(field)) continue;
      emit(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      await write(field, depth + 1);
    }
    emit('}');
  };
  await write(value, 0);
  flush();
  return pieces;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** An array, or an object JSON.stringify walks key by key (no toJSON of its own). */
function isPlainContainer(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * Waiting items in one line per key, served round-robin: each key in turn gives its oldest item,
 * and a key that may not go now keeps its place in the turn. The one queue behind request
 * admission (fair-admission.ts, keyed by tenant) and the upstream call scheduler
 * (fair-scheduler.ts, keyed by account). Written by hand: a Map's insertion order is the turn
 * order (a served key goes to the back), which is all it needs.
 */
export class RoundRobinLines<T> {
  private readonly lines = new Map<string, T[]>();
  private count = 0;

  /** Keys with items waiting. */
  get keys(): number {
    return this.lines.size;
  }

  /** Items waiting, all keys together. */
  get waiting(): number {
    return this.count;
  }

  has(key: string): boolean {
    return this.lines.has(key);
  }

  lengthOf(key: string): number {
    return this.lines.get(key)?.length ?? 0;
  }

  push(key: string, item: T): void {
    const line = this.lines.get(key);
    if (line) line.push(item);
    else this.lines.set(key, [item]);
    this.count += 1;
  }

  /** Takes `item` out of its line (it gave up waiting); false when it was not there. */
  remove(key: string, item: T): boolean {
    const line = this.lines.get(key);
    const index = line?.indexOf(item) ?? -1;
    if (!line || index < 0) return false;
    line.splice(index, 1);
    if (line.length === 0) this.lines.delete(key);
    this.count -= 1;
    return true;
  }

  /**
   * Serves while `more()` holds and some key may go: each key in turn hands its oldest item to
   * `grant` when `mayGo(key)`, else keeps its place and `held(key)` is told.
   */
  serve(
    mayGo: (key: string) => boolean,
    grant: (key: string, item: T) => void,
    more: () => boolean = () => true,
    held: (key: string) => void = () => undefined,
  ): void {
    let skipped = 0;
    while (this.lines.size > 0 && skipped < this.lines.size && more()) {
      const next = this.lines.entries().next();
      if (next.done) return;
      const [key, line] = next.value;
      this.lines.delete(key);
      if (!mayGo(key)) {
        this.lines.set(key, line);
        skipped += 1;
        held(key);
        continue;
      }
      skipped = 0;
      const item = line.shift() as T;
      if (line.length > 0) this.lines.set(key, line);
      this.count -= 1;
      grant(key, item);
    }
  }
}

/**
 * Preloaded (`--import`) into every bench child, the gateway included; it adds nothing to the
 * request path. It lets the bench's parent process, over the child's private IPC channel only:
 * - end the child when the parent goes away (even if the parent was killed outright);
 * - run a full GC and report the RSS, the V8 heap in use and the C heap after it, when the child
 *   was started with --expose-gc.
 */
import { readFileSync } from 'node:fs';

const gc = globalThis.gc;

/**
 * Resident bytes of the C heap (the `[heap]` mapping: glibc malloc's main arena), where Node keeps
 * the buffers of request bodies; null where /proc is not there.
 */
function cHeapBytes() {
  try {
    let inHeap = false;
    let kb = 0;
    for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
      const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (mapping) inHeap = mapping[1] === '[heap]';
      const resident = /^Rss:\s+(\d+) kB/.exec(line);
      if (resident && inHeap) kb += Number(resident[1]);
    }
    return kb * 1024;
  } catch {
    return null;
  }
}

if (process.send) {
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message) => {
    if (message.type !== 'gc') return;
    if (gc) {
      gc();
      gc(); // a second pass collects what the first one's finalizers released
    }
    const { rss, heapUsed } = process.memoryUsage();
    process.send?.({ type: 'gc', collected: gc !== undefined, rss, heapUsed, cHeap: cHeapBytes() });
  });
  // The IPC channel must not keep an otherwise finished child alive.
  process.channel?.unref();
}

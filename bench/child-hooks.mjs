/**
 * Preloaded (`--import`) into every bench child, the gateway included; it adds nothing to the
 * request path. It lets the bench's parent process, over the child's private IPC channel only:
 * - end the child when the parent goes away (even if the parent was killed outright);
 * - run a full GC and report the RSS, the V8 heap in use and the C heap after it, when the child
 *   was started with --expose-gc;
 * - report the event loop's longest delay since the last `loop` question (perf_hooks' histogram,
 *   sampled every 10 ms by a timer of libuv's, not by a request).
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

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
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  process.on('message', (message) => {
    if (message.type === 'loop') {
      // Nanoseconds in the histogram; the longest since the last question, then forgotten.
      process.send?.({ type: 'loop', maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 });
      delay.reset();
      return;
    }
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

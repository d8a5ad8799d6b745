/**
 * Preloaded (`--import`) into every bench child, the gateway included; it adds nothing to the
 * request path. It lets the bench's parent process, over the child's private IPC channel only:
 * - end the child when the parent goes away (even if the parent was killed outright);
 * - run a full GC and report the RSS and V8 heap in use after it, when the child was started
 *   with --expose-gc.
 */
import v8 from 'node:v8';
import { readFileSync } from 'node:fs';

const gc = globalThis.gc;

if (process.send) {
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message) => {
    if (message.type !== 'gc') return;
    if (gc) {
      gc();
      gc(); // a second pass collects what the first one's finalizers released
    }
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    if (process.env.BENCH_MEMORY_DETAIL) {
      const spaces = Object.fromEntries(
        v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 1e6)]),
      );
      const smaps = readFileSync('/proc/self/smaps', 'utf8').split('\n');
      const byKind = {};
      let kind = '';
      for (const line of smaps) {
        const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
        if (head) kind = head[1].startsWith('/') ? 'file' : head[1] || 'anon';
        const rssLine = /^Rss:\s+(\d+) kB/.exec(line);
        if (rssLine) byKind[kind] = (byKind[kind] ?? 0) + Number(rssLine[1]);
      }
      const anonSizes = [];
      kind = '';
      let size = 0;
      for (const line of smaps) {
        const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
        if (head) { kind = head[3] || 'anon'; size = 0; }
        const rssLine = /^Rss:\s+(\d+) kB/.exec(line);
        if (rssLine && kind === 'anon' && Number(rssLine[1]) > 4000) anonSizes.push(Math.round(Number(rssLine[1]) / 1000));
      }
      process.stderr.write(`smaps MB: ${JSON.stringify(Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, Math.round(v / 1000)])))} big anon: ${anonSizes.join(',')}\n`);
      process.stderr.write(`memory: rss ${Math.round(rss / 1e6)} heapTotal ${Math.round(heapTotal / 1e6)} external ${Math.round(external / 1e6)} arrayBuffers ${Math.round(arrayBuffers / 1e6)} ${JSON.stringify(spaces)}\n`);
    }
    process.send?.({ type: 'gc', collected: gc !== undefined, rss, heapUsed });
  });
  // The IPC channel must not keep an otherwise finished child alive.
  process.channel?.unref();
}

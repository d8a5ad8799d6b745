/**
 * Preloaded (`--import`) into every bench child, the gateway included; it adds nothing to the
 * request path. It lets the bench's parent process, over the child's private IPC channel only:
 * - end the child when the parent goes away (even if the parent was killed outright);
 * - run a full GC and report the RSS and V8 heap in use after it, when the child was started
 *   with --expose-gc.
 */
const gc = globalThis.gc;

if (process.send) {
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message) => {
    if (message.type !== 'gc') return;
    if (gc) {
      gc();
      gc(); // a second pass collects what the first one's finalizers released
    }
    const { rss, heapUsed } = process.memoryUsage();
    process.send?.({ type: 'gc', collected: gc !== undefined, rss, heapUsed });
  });
  // The IPC channel must not keep an otherwise finished child alive.
  process.channel?.unref();
}

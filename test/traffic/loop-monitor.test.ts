import { describe, expect, it } from 'vitest';
import { until } from '../../support/wait.js';
import {
  BUSY_AT,
  LoopMonitor,
  QUIET_BELOW,
  QUIET_WINDOWS,
  TICK_MS,
  processLoop,
  stopProcessLoop,
} from '../../src/traffic/loop-monitor.js';

describe('LoopMonitor', () => {
  it('is busy from the first window at BUSY_AT, and stays busy through windows in between', () => {
    const load = new LoopMonitor();
    load.sample(BUSY_AT - 0.01);
    expect(load.busy).toBe(false);
    load.sample(BUSY_AT);
    expect(load.busy).toBe(true);
    for (let i = 0; i < 3 * QUIET_WINDOWS; i += 1) load.sample((BUSY_AT + QUIET_BELOW) / 2);
    expect(load.busy).toBe(true);
    expect(load.utilization).toBeCloseTo((BUSY_AT + QUIET_BELOW) / 2);
  });

  it(`is quiet again only after ${QUIET_WINDOWS} quiet windows in a row, and says so once each way`, () => {
    const load = new LoopMonitor();
    const changes: boolean[] = [];
    load.onChange((busy) => changes.push(busy));
    load.sample(1);
    load.sample(1);
    for (let i = 0; i < QUIET_WINDOWS - 1; i += 1) load.sample(0.1);
    load.sample(0.7); // not quiet: the count starts again
    for (let i = 0; i < QUIET_WINDOWS - 1; i += 1) load.sample(0.1);
    expect(load.busy).toBe(true);
    load.sample(0.1);
    expect(load.busy).toBe(false);
    expect(changes).toEqual([true, false]);
  });

  it('is busy at once on a surge admission priced, and quiet again as after any busy window', () => {
    const load = new LoopMonitor();
    const changes: boolean[] = [];
    load.onChange((busy) => changes.push(busy));
    load.surge();
    expect(load.busy).toBe(true);
    for (let i = 0; i < QUIET_WINDOWS - 1; i += 1) load.sample(0.1);
    expect(load.busy).toBe(true);
    load.sample(0.1);
    expect(changes).toEqual([true, false]);
  });

  it('samples the real loop: a blocked loop reads as busy', async () => {
    // A sampler of its own, started right before the loop is held: the shared one's last sample
    // may be up to a window old, and 250 ms held in a window of 349 reads 0.72, under BUSY_AT.
    const load = new LoopMonitor().start();
    try {
      const heldUntil = performance.now() + 250;
      while (performance.now() < heldUntil) {
        // hold the loop for two and a half windows
      }
      // The next window's sample reads it (a held loop delays the sampler's timer, not the read).
      await until(() => load.busy, 1_000);
      expect(load.busy).toBe(true);
    } finally {
      load.stop();
    }
  });

  it("keeps the last stall of this process's loop and answers it since a time", () => {
    let now = 0;
    const loop = new LoopMonitor(() => now);
    now = TICK_MS;
    loop.tick(); // on time: no stall
    now = 60;
    loop.tick(); // 40 ms late
    now = 71;
    loop.tick(); // 1 ms late: jitter, not a stall
    now = 100;
    loop.tick(); // 19 ms late
    // The last stall is the one an answer processed now may have waited through.
    expect(loop.stallSince(0)).toBe(19);
    expect(loop.stallSince(99)).toBe(19);
    expect(loop.stallSince(100)).toBe(0);
  });

  it("is the process's one monitor: after stopProcessLoop(), the next processLoop() samples again", async () => {
    const loop = processLoop();
    stopProcessLoop();
    expect(processLoop()).toBe(loop);
    const heldAt = performance.now();
    while (performance.now() < heldAt + 5 * TICK_MS) {
      // hold the loop: the restarted timer's next tick is late
    }
    await until(() => loop.stallSince(heldAt) > 0, 1_000);
  });
});

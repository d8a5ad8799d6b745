/** The circuit breaker's state machine (src/traffic/breaker.ts), on the clock it is given. */
import { describe, expect, it } from 'vitest';
import { allOf, Breaker, NO_SLOT } from '../../src/traffic/breaker.js';

describe('Breaker', () => {
  it('opens after its threshold of faults in a row, fails fast for its cooldown, then lets its probes through', () => {
    const states: string[] = [];
    const breaker = new Breaker(3, 1_000, (state) => states.push(state), 2);
    breaker.fault(0);
    breaker.fault(1);
    // A success ends the run: two more faults are not yet three in a row.
    breaker.success();
    breaker.fault(2);
    breaker.fault(3);
    expect(breaker.state).toBe('closed');
    // A closed breaker's pass holds no slot.
    expect(breaker.admit(3)).toBe(NO_SLOT);
    breaker.fault(4);
    expect(breaker.state).toBe('open');
    expect(breaker.admit(500)).toBeNull();
    expect(breaker.retryInMs(500)).toBe(504);
    expect(breaker.admit(1_004)).not.toBeNull();
    expect(breaker.state).toBe('half-open');
    expect(breaker.admit(1_004)).not.toBeNull();
    expect(breaker.admit(1_004)).toBeNull();
    breaker.success();
    expect(breaker.state).toBe('closed');
    expect(breaker.idle).toBe(true);
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });

  it('opens again when a probe fails, and a released probe slot goes to the next call', () => {
    const breaker = new Breaker(1, 100);
    breaker.fault(0);
    const probe = breaker.admit(100);
    expect(probe).not.toBeNull();
    expect(breaker.admit(100)).toBeNull();
    probe!.release();
    // Released twice, it frees one slot: the second release is a no-op.
    probe!.release();
    expect(breaker.admit(100)).not.toBeNull();
    expect(breaker.admit(100)).toBeNull();
    breaker.fault(150);
    expect(breaker.state).toBe('open');
    expect(breaker.retryInMs(150)).toBe(100);
    expect(breaker.admit(249)).toBeNull();
    expect(breaker.idle).toBe(false);
  });

  it('asks without taking: admits() half-opens it but holds no slot', () => {
    const breaker = new Breaker(1, 100);
    breaker.fault(0);
    expect(breaker.admits(50)).toBe(false);
    for (let i = 0; i < 5; i += 1) expect(breaker.admits(100)).toBe(true);
    expect(breaker.state).toBe('half-open');
    expect(breaker.admit(100)).not.toBeNull();
    expect(breaker.admits(100)).toBe(false);
  });

  it("a pass released after its round ended frees nothing of a later round's", () => {
    const breaker = new Breaker(1, 100, undefined, 2);
    breaker.fault(0);
    const early = breaker.admit(100)!;
    const failing = breaker.admit(100)!;
    // One probe fails: the round ends, and the breaker opens again.
    breaker.fault(110);
    failing.release();
    const next = [breaker.admit(210), breaker.admit(210)];
    expect(next.every((pass) => pass !== null)).toBe(true);
    // The first round's other probe ends late (abandoned): the new round stays at its two.
    early.release();
    expect(breaker.admit(210)).toBeNull();
    // The new round's passes, released by one `allOf`, free both of its slots.
    allOf(next.filter((pass) => pass !== null)).release();
    expect(breaker.admit(210)).not.toBeNull();
    expect(breaker.admit(210)).not.toBeNull();
    expect(breaker.admit(210)).toBeNull();
  });
});

/** The circuit breaker's state machine (src/traffic/breaker.ts), on the clock it is given. */
import { describe, expect, it } from 'vitest';
import { Breaker } from '../../src/traffic/breaker.js';

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
    expect(breaker.admit(3)).toBe(true);
    breaker.fault(4);
    expect(breaker.state).toBe('open');
    expect(breaker.admit(500)).toBe(false);
    expect(breaker.retryInMs(500)).toBe(504);
    expect(breaker.admit(1_004)).toBe(true);
    expect(breaker.state).toBe('half-open');
    expect(breaker.admit(1_004)).toBe(true);
    expect(breaker.admit(1_004)).toBe(false);
    breaker.success();
    expect(breaker.state).toBe('closed');
    expect(breaker.idle).toBe(true);
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });

  it('opens again when a probe fails, and frees the probe of a call abandoned', () => {
    const breaker = new Breaker(1, 100);
    breaker.fault(0);
    expect(breaker.admit(100)).toBe(true);
    expect(breaker.admit(100)).toBe(false);
    breaker.abandon();
    expect(breaker.admit(100)).toBe(true);
    breaker.fault(150);
    expect(breaker.state).toBe('open');
    expect(breaker.retryInMs(150)).toBe(100);
    expect(breaker.admit(249)).toBe(false);
    expect(breaker.idle).toBe(false);
  });
});

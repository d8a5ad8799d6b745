/** The one-process bus: events to the topic's listeners only, in order; a stopped one hears none. */
import { describe, expect, it } from 'vitest';
import { LocalBus, type LiveBus, type LiveEvent } from '../../src/live/bus.js';

const head = (seq: number): LiveEvent => ({ kind: 'head', seq, total: seq + 1 });

describe('LocalBus', () => {
  it("delivers a topic's events, in order, to its listeners and no other topic's", async () => {
    const bus = new LocalBus();
    const a: LiveEvent[] = [];
    const b: LiveEvent[] = [];
    await bus.listen('acct:T1', (event) => a.push(event));
    await bus.listen('acct:T2', (event) => b.push(event));
    await bus.publish('acct:T1', [head(1), head(2)]);
    expect(a).toEqual([head(1), head(2)]);
    expect(b).toEqual([]);
  });

  it('stops delivering to a listener that stopped, and to all once closed', async () => {
    const bus = new LocalBus();
    const heard: string[] = [];
    const stopFirst = await bus.listen('t', () => heard.push('first'));
    await bus.listen('t', () => heard.push('second'));
    await stopFirst();
    await bus.publish('t', [head(1)]);
    expect(heard).toEqual(['second']);
    await bus.close();
    await bus.publish('t', [head(2)]);
    expect(heard).toEqual(['second']);
  });

  it('always lets this copy poll, and hands no memory over: there is no other copy', async () => {
    const bus: LiveBus = new LocalBus();
    expect(await bus.claim('t')).toBe('held');
    await bus.saveSeen('t', { total: 3, newestIds: ['a'] });
    expect(await bus.loadSeen('t')).toBeNull();
  });
});

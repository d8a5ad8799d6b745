/**
 * Admission: nothing waits while the loop has room; once it is busy and shared, tenants take
 * turns, each line is bounded in length and in time, and a tenant rests after each request.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ACTIVE_MS,
  ANONYMOUS,
  Admission,
  BYTES_PER_UNIT,
  groupOf,
  MAX_REST_MS,
  REST_FACTOR,
  UNITS_PER_CALL,
  UNVERIFIED,
  isRefusal,
  tenantKind,
  type AdmissionOptions,
  type LoopLoad,
  type Refusal,
  type Release,
  type Waiting,
} from '../../src/traffic/fair-admission.js';

class FakeLoad implements LoopLoad {
  busy = false;
  utilization = 0;
  private readonly listeners = new Set<(busy: boolean) => void>();
  set(busy: boolean): void {
    this.busy = busy;
    for (const listener of this.listeners) listener(busy);
  }
  onChange(listener: (busy: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

let clock = 0;
const refusals: string[] = [];
function admission(overrides: Partial<AdmissionOptions> = {}): {
  admission: Admission;
  load: FakeLoad;
} {
  const load = new FakeLoad();
  return {
    load,
    admission: new Admission({
      busyConcurrency: 1,
      maxWaiting: 10,
      maxWaitMs: 5_000,
      load,
      now: () => clock,
      onRefused: (kind, refusal) => refusals.push(`${kind} ${refusal.refused}`),
      ...overrides,
    }),
  };
}

const released = (outcome: Release | Waiting | Refusal): Release => {
  if (typeof outcome !== 'function') throw new Error('expected to go in at once');
  return outcome;
};
const waiting = (outcome: Release | Waiting | Refusal): Waiting => {
  if (typeof outcome === 'function' || isRefusal(outcome)) throw new Error('expected to wait');
  return outcome;
};

beforeEach(() => {
  clock = 0;
  refusals.length = 0;
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Admission', () => {
  it('lets everything in while the loop has room, however much one tenant sends', () => {
    const { admission: gate } = admission();
    const all = Array.from({ length: 50 }, (_, i) => gate.admit(i % 2 ? 'account:a' : 'account:b'));
    expect(all.every((outcome) => typeof outcome === 'function')).toBe(true);
    expect(gate.waiting).toBe(0);
    expect(gate.turnTaking).toBe(false);
  });

  it('lets a lone tenant in at once even when the loop is busy: nobody to take turns with', () => {
    const { admission: gate, load } = admission();
    load.set(true);
    for (let i = 0; i < 5; i += 1) released(gate.admit('account:a'));
    expect(gate.turnTaking).toBe(false);
  });

  it('when busy and shared, holds a tenant to busyConcurrency and lets a quiet one in at once', async () => {
    const { admission: gate, load } = admission();
    load.set(true);
    released(gate.admit('account:quiet'))();
    // Two tenants active within ACTIVE_MS: turns.
    const first = released(gate.admit('account:flood'));
    expect(gate.turnTaking).toBe(true);
    const queued = [gate.admit('account:flood'), gate.admit('account:flood')].map(waiting);
    // The quiet tenant comes back: it goes in at once although the flood has a line.
    const quiet = released(gate.admit('account:quiet'));
    expect(gate.waiting).toBe(2);
    quiet();
    first();
    // The flood rests as long as its request took (0 ms here) per other tenant: next one goes.
    await expect(queued[0]?.outcome).resolves.toBeTypeOf('function');
    expect(gate.waiting).toBe(1);
  });

  it('serves the lines round-robin, one request per tenant in turn', async () => {
    const { admission: gate, load } = admission();
    load.set(true);
    const order: string[] = [];
    const a = released(gate.admit('account:a'));
    const b = released(gate.admit('account:b'));
    for (const tenant of ['account:a', 'account:a', 'account:b', 'account:b']) {
      void waiting(gate.admit(tenant)).outcome.then((release) => {
        order.push(tenant);
        if (typeof release === 'function') release();
      });
    }
    a();
    b();
    await vi.runAllTimersAsync();
    expect(order).toEqual(['account:a', 'account:b', 'account:a', 'account:b']);
  });

  it(`makes a tenant that starts over 1.5 times its share rest ${REST_FACTOR} times as long as its request took`, async () => {
    const { admission: gate, load } = admission({ busyConcurrency: 5 });
    load.set(true);
    released(gate.admit('account:other'));
    // The flood starts five requests to the other's one: over 1.5 times its half.
    const flood = Array.from({ length: 5 }, () => released(gate.admit('account:flood')));
    const next = waiting(gate.admit('account:flood'));
    let started = false;
    void next.outcome.then(() => (started = true));
    clock += 40; // the flood's request took 40 ms
    flood[0]?.();
    const rest = 40 * REST_FACTOR;
    await vi.advanceTimersByTimeAsync(rest - 1);
    clock += rest - 1;
    expect(started).toBe(false);
    clock += 2;
    await vi.advanceTimersByTimeAsync(2);
    expect(started).toBe(true);
  });

  it('charges the bytes an answer took, not only the request: large answers use a share sooner', async () => {
    // Two tenants, one request each of 10 ms; one answer 300 bytes, the other 64 KiB.
    const alike = (bigBytes: number) => {
      const { admission: gate, load } = admission({ busyConcurrency: 5 });
      load.set(true);
      const small = released(gate.admit('account:small'));
      clock += 10;
      small(300);
      const big = released(gate.admit('account:big'));
      clock += 10;
      big(bigBytes);
      return gate;
    };
    // Counted by requests alone they ask alike: nobody rests.
    expect(typeof alike(300).admit('account:big')).toBe('function');
    // Counted by work, 64 KiB is four more units: the large tenant rests REST_FACTOR times as
    // long as its request took, while the small one still goes in at once.
    const gate = alike(4 * BYTES_PER_UNIT);
    const next = waiting(gate.admit('account:big'));
    let started = false;
    void next.outcome.then(() => (started = true));
    expect(typeof gate.admit('account:small')).toBe('function');
    clock += 10 * REST_FACTOR + 1;
    await vi.advanceTimersByTimeAsync(10 * REST_FACTOR + 1);
    expect(started).toBe(true);
  });

  it('charges the calls made for a tenant (chargeWork), not only its requests: a fan-out uses a share sooner', () => {
    // Two tenants, one request each of 10 ms and a small answer; one made 200 calls meanwhile.
    const afterOneEach = (fanOutCalls: number) => {
      const { admission: gate, load } = admission({ busyConcurrency: 5 });
      load.set(true);
      const small = released(gate.admit('account:small'));
      gate.chargeWork('account:small', UNITS_PER_CALL);
      clock += 10;
      small(300);
      const fanOut = released(gate.admit('account:fan-out'));
      for (let i = 0; i < fanOutCalls; i += 1) gate.chargeWork('account:fan-out', UNITS_PER_CALL);
      clock += 10;
      fanOut(300);
      return gate;
    };
    // One call each: they ask alike, nobody rests.
    expect(typeof afterOneEach(1).admit('account:fan-out')).toBe('function');
    // 200 calls: the fan-out's tenant rests, the small one still goes in at once.
    const gate = afterOneEach(200);
    waiting(gate.admit('account:fan-out'));
    expect(typeof gate.admit('account:small')).toBe('function');
  });

  it('counts a flood of one-shot unverified pairs as one tenant: an account asking as often never rests', () => {
    const { admission: gate, load } = admission({ busyConcurrency: 5 });
    load.set(true);
    for (let i = 0; i < 30; i += 1) {
      // A new invented pair per request, then the account's own request, each taking 5 ms.
      const invented = released(gate.admit(`${UNVERIFIED}:pair-${i}`));
      clock += 5;
      invented();
      const own = gate.admit('account:bystander');
      // Were each pair a tenant of its own, 30 of them would be active: the account's share
      // would be 1/31 and it would rest after each request.
      expect(typeof own).toBe('function');
      clock += 5;
      (own as Release)();
    }
    expect(groupOf(`${UNVERIFIED}:pair-1`)).toBe(UNVERIFIED);
    expect(groupOf('account:a')).toBe('account:a');
  });

  it('never makes tenants rest that ask alike', () => {
    const { admission: gate, load } = admission({ busyConcurrency: 5 });
    load.set(true);
    for (let round = 0; round < 4; round += 1) {
      for (const tenant of ['account:a', 'account:b', 'account:c']) {
        const release = released(gate.admit(tenant));
        clock += 10;
        release();
      }
    }
    expect(gate.waiting).toBe(0);
  });

  it(`rests at most ${MAX_REST_MS} ms, and not at all once turns have ended`, async () => {
    const { admission: gate, load } = admission({ busyConcurrency: 4 });
    load.set(true);
    released(gate.admit('account:other'));
    const slow = released(gate.admit('account:slow'));
    for (let i = 0; i < 3; i += 1) released(gate.admit('account:slow'));
    const next = waiting(gate.admit('account:slow'));
    clock += 10_000;
    gate.admit('account:other'); // still active
    waiting(gate.admit('account:slow')); // and so is the slow tenant
    gate.chargeWork('account:slow', 10); // the calls its long request made lately
    slow();
    let started = false;
    void next.outcome.then(() => (started = true));
    clock += MAX_REST_MS - 1;
    await vi.advanceTimersByTimeAsync(MAX_REST_MS - 1);
    expect(started).toBe(false);
    clock += 1;
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toBe(true);
    load.set(false);
    const more = Array.from({ length: 5 }, () => gate.admit('account:slow'));
    expect(more.every((outcome) => typeof outcome === 'function')).toBe(true);
  });

  it('refuses at once past maxWaiting, and a request that waited maxWaitMs', async () => {
    const { admission: gate, load } = admission({ maxWaiting: 2, maxWaitMs: 300 });
    load.set(true);
    released(gate.admit('account:flood'));
    released(gate.admit('account:other'));
    const lined = [gate.admit('account:flood'), gate.admit('account:flood')].map(waiting);
    const third = gate.admit('account:flood');
    expect(isRefusal(third) && third.refused).toBe('line-full');
    expect(isRefusal(third) && third.retryAfterSeconds).toBe(1);
    await vi.advanceTimersByTimeAsync(300);
    const outcomes = await Promise.all(lined.map((w) => w.outcome));
    expect(outcomes.map((o) => (typeof o === 'function' ? 'ran' : o.refused))).toEqual([
      'waited-too-long',
      'waited-too-long',
    ]);
    expect(gate.waiting).toBe(0);
    expect(refusals).toEqual([
      'account line-full',
      'account waited-too-long',
      'account waited-too-long',
    ]);
  });

  it('forgets a request whose client left, and lets the whole line in when the loop is quiet again', async () => {
    const { admission: gate, load } = admission();
    load.set(true);
    released(gate.admit('account:flood'));
    released(gate.admit('account:other'));
    const gone = waiting(gate.admit('account:flood'));
    const stays = [gate.admit('account:flood'), gate.admit('account:flood')].map(waiting);
    gone.cancel();
    expect(gate.waiting).toBe(2);
    load.set(false);
    const outcomes = await Promise.all(stays.map((w) => w.outcome));
    expect(outcomes.every((o) => typeof o === 'function')).toBe(true);
    expect(gate.waiting).toBe(0);
  });

  it(`forgets tenants quiet for ${ACTIVE_MS} ms, busy or not: turns end when one tenant is left`, () => {
    const { admission: gate, load } = admission();
    for (let i = 0; i < 1_000; i += 1) released(gate.admit(`account:${i}`))();
    clock += ACTIVE_MS;
    released(gate.admit('account:last'))();
    load.set(true);
    expect(gate.turnTaking).toBe(false);
    for (let i = 0; i < 5; i += 1) released(gate.admit('account:last'));
  });

  it('with busyConcurrency 0, is off', () => {
    const { admission: gate, load } = admission({ busyConcurrency: 0 });
    load.set(true);
    gate.admit('account:other');
    for (let i = 0; i < 20; i += 1) released(gate.admit('account:flood'));
  });

  it('names tenants by kind only', () => {
    expect([tenantKind(UNVERIFIED), tenantKind(ANONYMOUS), tenantKind('account:xyz')]).toEqual([
      'unverified',
      'anonymous',
      'account',
    ]);
  });
});

/**
 * Admission: nothing waits while the loop has room; once it is busy, at most `seats` requests
 * run, a freed seat goes to the flow that used least lately, seats follow the loop, and lines are
 * bounded in length and in time. Never a rest: a seat is never left empty while a request waits.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ANONYMOUS,
  Admission,
  BYTES_PER_UNIT,
  CPU_MS_PER_UNIT,
  UNITS_PER_SEAT,
  UNVERIFIED,
  groupOf,
  isRefusal,
  tenantKind,
  type AdmissionOptions,
  type LoopLoad,
  type Refusal,
  type Release,
  type Waiting,
} from '../../src/traffic/fair-admission.js';
import { USE_HALF_LIFE_MS } from '../../src/traffic/ledger.js';

class FakeLoad implements LoopLoad {
  busy = false;
  utilization = 0;
  private readonly listeners = new Set<(busy: boolean) => void>();
  private readonly samplers = new Set<(utilization: number) => void>();
  set(busy: boolean): void {
    this.busy = busy;
    for (const listener of this.listeners) listener(busy);
  }
  sample(utilization: number): void {
    this.utilization = utilization;
    for (const listener of this.samplers) listener(utilization);
  }
  onChange(listener: (busy: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  onSample(listener: (utilization: number) => void): () => void {
    this.samplers.add(listener);
    return () => this.samplers.delete(listener);
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
      minSeats: 1,
      maxWaiting: 10,
      maxWaitMs: 5_000,
      load,
      now: () => clock,
      loopActiveMs: () => 0,
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
/** The order in which waiting requests are granted, by label. */
function grantOrder(lined: { label: string; wait: Waiting }[]): string[] {
  const order: string[] = [];
  for (const { label, wait } of lined) {
    void wait.outcome.then((granted) => {
      if (typeof granted === 'function') {
        order.push(label);
        granted();
      }
    });
  }
  return order;
}

/**
 * With the loop busy and its one seat held by another flow: the order in which one waiting
 * request of each of `accounts` gets the seat once it is freed.
 */
async function orderOnceFreed(gate: Admission, load: FakeLoad, accounts: string[]) {
  load.set(true);
  const seat = released(gate.admit('account:other'));
  const order = grantOrder(
    accounts.map((label) => ({ label, wait: waiting(gate.admit(`account:${label}`)) })),
  );
  seat();
  await vi.runAllTimersAsync();
  return order;
}

beforeEach(() => {
  clock = 0;
  refusals.length = 0;
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Admission', () => {
  it('lets everything in while the loop has room, however much one flow sends', () => {
    const { admission: gate } = admission();
    const all = Array.from({ length: 50 }, (_, i) => gate.admit(i % 2 ? 'account:a' : 'account:b'));
    expect(all.every((outcome) => typeof outcome === 'function')).toBe(true);
    expect(gate.seats).toBe(Number.POSITIVE_INFINITY);
  });

  it('once busy, keeps the seats running then and lines up the rest', () => {
    const { admission: gate, load } = admission({ minSeats: 2 });
    const running = [gate.admit('account:a'), gate.admit('account:a'), gate.admit('account:a')];
    load.set(true);
    expect(gate.seats).toBe(3);
    waiting(gate.admit('account:b'));
    expect(gate.waiting).toBe(1);
    released(running[0] as Release | Waiting | Refusal)();
    expect(gate.waiting).toBe(0);
    expect(gate.running).toBe(3);
  });

  it("calls a calm loop busy at once when a window's work arrives together; a light flow then goes ahead of the burst", async () => {
    const { admission: gate, load } = admission({ minSeats: 2 });
    let surges = 0;
    Object.assign(load, { surge: () => ((surges += 1), load.set(true)) });
    // Steady: 150 requests every 10 ms (each priced 1, a flow never seen) never surge.
    for (let round = 0; round < 3; round += 1) {
      for (let i = 0; i < 150; i += 1) released(gate.admit(`unverified:steady-${round}-${i}`))();
      clock += 10;
    }
    expect(surges).toBe(0);
    // A burst: past 200 units within 10 ms, the rest of it waits.
    const burst = Array.from({ length: 450 }, (_, i) => gate.admit(`unverified:burst-${i}`));
    expect(surges).toBe(1);
    expect(gate.seats).toBeLessThan(450);
    expect(gate.waiting).toBeGreaterThan(0);
    const admitted = burst.filter((outcome) => typeof outcome === 'function').length;
    expect(admitted).toBe(gate.running);
    expect(gate.waiting).toBe(450 - admitted);
    // The bystander runs at once, on a seat the burst lends it, ahead of the burst's waiting rest.
    const light = await waiting(gate.admit('account:bystander')).outcome;
    expect(typeof light).toBe('function');
    expect(gate.waiting).toBe(450 - admitted);
  });

  it('gives a freed seat to the flow that used least lately, not to the first in line', async () => {
    const { admission: gate, load } = admission();
    load.set(true);
    const seat = released(gate.admit('account:flood'));
    const lined = [
      ...Array.from({ length: 3 }, (_, i) => ({
        label: `flood ${i}`,
        wait: waiting(gate.admit('account:flood')),
      })),
      { label: 'quiet', wait: waiting(gate.admit('account:quiet')) },
    ];
    const order = grantOrder(lined);
    seat();
    await vi.runAllTimersAsync();
    expect(order).toEqual(['quiet', 'flood 0', 'flood 1', 'flood 2']);
  });

  it('never leaves a seat empty while a request waits: a lone flood runs back to back', async () => {
    const { admission: gate, load } = admission();
    load.set(true);
    const seat = released(gate.admit('account:flood'));
    const lined = Array.from({ length: 5 }, (_, i) => ({
      label: String(i),
      wait: waiting(gate.admit('account:flood')),
    }));
    const order = grantOrder(lined);
    seat();
    // No timer passes: each release hands the seat on at once.
    await Promise.resolve();
    for (let i = 0; i < 5; i += 1) await Promise.resolve();
    expect(order).toEqual(['0', '1', '2', '3', '4']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('charges the bytes a request wrote when it ends: a large answer makes a flow go later', async () => {
    const { admission: gate, load } = admission();
    // Each flow has had one request; the heavy one wrote 8 units' worth of answer.
    released(gate.admit('account:heavy'))({ bytes: 8 * BYTES_PER_UNIT });
    released(gate.admit('account:light'))();
    expect(await orderOnceFreed(gate, load, ['heavy', 'light'])).toEqual(['light', 'heavy']);
  });

  it("charges the loop's busy time while a request ran, shared with those beside it by their flows' cost", async () => {
    let active = 0;
    const { admission: gate, load } = admission({ loopActiveMs: () => active });
    const heavy = released(gate.admit('account:heavy'));
    const light = released(gate.admit('account:light'));
    active += 2;
    light();
    // The heavy one ran on alone: 40 ms of the loop, most of it its own.
    active += 40;
    heavy();
    expect(await orderOnceFreed(gate, load, ['heavy', 'light'])).toEqual(['light', 'heavy']);
    // Now the heavy flow costs about 30 units a request, the light one 2: a request of each runs
    // 20 ms side by side, and the light one is charged about 1/16 of it, not half.
    load.set(false);
    const before = {
      heavy: gate.ledger.useOf('account:heavy'),
      light: gate.ledger.useOf('account:light'),
    };
    const both = [gate.admit('account:heavy'), gate.admit('account:light')].map(released);
    active += 20;
    for (const release of both) release();
    const charged = {
      heavy: gate.ledger.useOf('account:heavy') - before.heavy - 1,
      light: gate.ledger.useOf('account:light') - before.light - 1,
    };
    expect(charged.light).toBeGreaterThan(0);
    expect(charged.heavy / charged.light).toBeGreaterThan(8);
  });

  it("prices a request on arrival at its flow's recent cost: a burst outweighs a light flow before any of it ends", async () => {
    let active = 0;
    const { admission: gate, load } = admission({ loopActiveMs: () => active });
    // The heavy flow's one earlier request took 100 ms of the loop alone: 400 units a request.
    const first = released(gate.admit('account:heavy'));
    active += 100;
    first();
    // Long enough ago that its use has faded; what its requests cost is still known.
    clock += 10 * USE_HALF_LIFE_MS;
    gate.ledger.chargeWork('account:light', 3);
    // Eight arrive at once while the loop has room: all run.
    const burst = Array.from({ length: 8 }, () => released(gate.admit('account:heavy')));
    // Priced at 8 x about 80 (the cost's moving average), not 8 x 1.
    expect(gate.ledger.useOf('account:heavy')).toBeGreaterThan(8 * 50);
    // The loop is busy now: the light flow borrows a seat at once instead of waiting for one.
    load.set(true);
    let granted: unknown;
    void waiting(gate.admit('account:light')).outcome.then((outcome) => (granted = outcome));
    // No timer runs: granted in the same turn, not after a wait.
    await Promise.resolve();
    expect(typeof granted).toBe('function');
    // The measured cost corrects the price: eight requests that cost almost nothing are refunded.
    for (const release of burst) release();
    expect(gate.ledger.useOf('account:heavy')).toBeLessThan(20);
  });

  it('prices a request again by its document once parsed: a flow new to the copy is charged what the document cost last time', async () => {
    let active = 0;
    const { admission: gate, load } = admission({ loopActiveMs: () => active });
    const document = {};
    // The document ran once as an unverified pair: 100 ms of the loop alone, 400 units.
    const first = released(gate.admit(`${UNVERIFIED}:pair`));
    first.price?.(document, 1);
    active += 100;
    first();
    clock += 10 * USE_HALF_LIFE_MS;
    gate.ledger.chargeWork('account:light', 3);
    // Its pair accepted, the caller is a new flow, priced on arrival at the prior.
    const burst = Array.from({ length: 8 }, () => released(gate.admit('account:heavy')));
    expect(gate.ledger.useOf('account:heavy')).toBeLessThan(8 * 50);
    // Parsed: each is charged the document's last cost before it runs.
    for (const release of burst) release.price?.(document, 1);
    expect(gate.ledger.useOf('account:heavy')).toBeGreaterThan(8 * 300);
    // A document never run is priced by its static estimate; a lower price charges nothing more.
    const cheap = released(gate.admit('account:other'));
    const arrived = gate.ledger.useOf('account:other');
    cheap.price?.({}, 0.5);
    expect(gate.ledger.useOf('account:other')).toBe(arrived);
    const costly = released(gate.admit('account:other'));
    const before = gate.ledger.useOf('account:other');
    costly.price?.({}, 200);
    expect(gate.ledger.useOf('account:other')).toBeGreaterThan(before + 150);
    load.set(true);
    let granted: unknown;
    void waiting(gate.admit('account:light')).outcome.then((outcome) => (granted = outcome));
    await Promise.resolve();
    expect(typeof granted).toBe('function');
  });

  it('runs costly documents one after another, light requests beside them, and gives up a waiting one whose seat is freed', async () => {
    const { admission: gate } = admission();
    // An idle loop admits a burst of eight at once ...
    const burst = Array.from({ length: 8 }, () => released(gate.admit('account:heavy')));
    // ... but once priced, only the first costly one runs; the others wait for room.
    const rooms = burst.map((release) => release.price?.({}, 1_000));
    expect(rooms[0]).toBeUndefined();
    const started: number[] = [];
    rooms.forEach((room, i) => void room?.then((refusal) => refusal ?? started.push(i)));
    // A light request runs at once beside them.
    const light = released(gate.admit('account:light'));
    expect(light.price?.({}, 1)).toBeUndefined();
    await Promise.resolve();
    expect(started).toEqual([]);
    (burst[0] as Release)();
    await Promise.resolve();
    expect(started).toEqual([1]);
    // A waiting one whose client left is told not to run, and never holds room.
    (burst[2] as Release)();
    expect(await rooms[2]).toMatchObject({ refused: 'waited-too-long' });
    (burst[1] as Release)();
    await Promise.resolve();
    expect(started).toEqual([1, 3]);
    // Documents that fit together run together.
    const small = [0, 1].map(() => released(gate.admit('account:mid')));
    for (const release of burst.slice(3)) release();
    await Promise.resolve();
    expect(small.map((release) => release.price?.({}, 60))).toEqual([undefined, undefined]);
    // Room is counted in requests too: units that do not sum back to 0 exactly never block one alone.
    for (const release of small) release();
    const drift = [20.1, 20.2, 20.3].map((units) => {
      const release = released(gate.admit('account:drift'));
      expect(release.price?.({}, units)).toBeUndefined();
      return release;
    });
    for (const release of drift) release();
    expect(released(gate.admit('account:alone')).price?.({}, 1_000)).toBeUndefined();
    // Priced once: a second price neither waits nor counts it twice.
    expect(small[0]?.price?.({}, 5_000)).toBeUndefined();
    // One that waits maxWaitMs for room is refused, as a line's request is.
    const late = released(gate.admit('account:late')).price?.({}, 150);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await late).toMatchObject({ refused: 'waited-too-long' });
    expect(refusals).toContain('account waited-too-long');
  });

  it('gives a document measured cheap but estimated costly costly room: shares of the loop cannot tell them apart', () => {
    const { admission: gate } = admission();
    const page = {};
    const measured = released(gate.admit('account:pages'));
    expect(measured.price?.(page, 500)).toBeUndefined();
    // Its loop share measured 1 unit (the loop did nothing else).
    measured();
    const running = released(gate.admit('account:other'));
    expect(running.price?.({}, 1_000)).toBeUndefined();
    expect(released(gate.admit('account:pages')).price?.(page, 500)).toBeInstanceOf(Promise);
    // Measured cheap and estimated cheap, it runs beside costly work.
    expect(released(gate.admit('account:pages')).price?.({}, 5)).toBeUndefined();
  });

  it('charges calls made for a flow (chargeWork), a fan-out going after a single call', async () => {
    const { admission: gate, load } = admission();
    gate.ledger.chargeWork('account:fan-out', 100);
    expect(await orderOnceFreed(gate, load, ['fan-out', 'small'])).toEqual(['small', 'fan-out']);
  });

  it(`forgets use with a half-life of ${USE_HALF_LIFE_MS} ms: yesterday's flood is not punished`, async () => {
    const { admission: gate, load } = admission();
    gate.ledger.chargeWork('account:old', 1_000);
    clock += 20 * USE_HALF_LIFE_MS;
    gate.ledger.chargeWork('account:recent', 1);
    expect(await orderOnceFreed(gate, load, ['recent', 'old'])).toEqual(['old', 'recent']);
  });

  it('counts every unverified pair towards one flow, each pair with its own line', async () => {
    const { admission: gate, load } = admission({ maxWaiting: 1 });
    for (let i = 0; i < 20; i += 1) released(gate.admit(`${UNVERIFIED}:pair-${i}`))();
    load.set(true);
    const seat = released(gate.admit('account:other'));
    const flood = waiting(gate.admit(`${UNVERIFIED}:pair-x`));
    // The flood's full line refuses it, never a new pair in the same class.
    expect(isRefusal(gate.admit(`${UNVERIFIED}:pair-x`))).toBe(true);
    const newcomer = waiting(gate.admit(`${UNVERIFIED}:pair-new`));
    const bystander = waiting(gate.admit('account:bystander'));
    const order = grantOrder([
      { label: 'flood', wait: flood },
      { label: 'newcomer', wait: newcomer },
      { label: 'bystander', wait: bystander },
    ]);
    seat();
    await vi.runAllTimersAsync();
    // Twenty invented pairs used the class's share: the account goes first; the lines alternate.
    expect(order).toEqual(['bystander', 'flood', 'newcomer']);
  });

  it('while one flow dominates beside another, adds seats while requests wait and the loop has room, and takes them back when saturated', () => {
    const { admission: gate, load } = admission({ minSeats: 2 });
    gate.ledger.chargeWork('account:poller', 2);
    load.set(true);
    released(gate.admit('account:team'));
    released(gate.admit('account:team'));
    for (let i = 0; i < 4; i += 1) waiting(gate.admit('account:team'));
    load.sample(0.6);
    expect(gate.seats).toBe(3);
    expect(gate.running).toBe(3);
    load.sample(0.6);
    expect(gate.seats).toBe(5);
    expect(gate.waiting).toBe(1);
    load.sample(0.92);
    expect(gate.seats).toBe(5);
    for (let i = 0; i < 10; i += 1) load.sample(1);
    expect(gate.seats).toBe(2);
  });

  it('while flows are alike, or one is alone, adds seats while requests wait, however full the loop', () => {
    const { admission: gate, load } = admission({ minSeats: 2 });
    load.set(true);
    const accounts = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const account of accounts.slice(0, 2)) released(gate.admit(`account:${account}`));
    for (const account of accounts.slice(2)) waiting(gate.admit(`account:${account}`));
    for (let i = 0; i < 5; i += 1) load.sample(1);
    expect(gate.running).toBe(8);
    expect(gate.waiting).toBe(0);
    // One account alone: no one for the line to protect either.
    const alone = admission({ minSeats: 2 });
    alone.load.set(true);
    released(alone.admission.admit('account:team'));
    released(alone.admission.admit('account:team'));
    for (let i = 0; i < 4; i += 1) waiting(alone.admission.admit('account:team'));
    for (let i = 0; i < 3; i += 1) alone.load.sample(1);
    expect(alone.admission.running).toBe(6);
  });

  it('sizes a request by what its flow costs lately, and lends its seats to a flow that used far less', async () => {
    let active = 0;
    const { admission: gate, load } = admission({ minSeats: 2, loopActiveMs: () => active });
    // The flood's last request held the loop alone for 10 ms: 40 units, two seats now.
    const before = released(gate.admit('account:flood'));
    active += 10 * UNITS_PER_SEAT * CPU_MS_PER_UNIT;
    before();
    load.set(true);
    const heavy = released(gate.admit('account:flood'));
    expect(gate.running).toBe(2);
    const flood = waiting(gate.admit('account:flood'));
    const bystander = waiting(gate.admit('account:bystander'));
    const again = waiting(gate.admit('account:bystander'));
    // No preemption, and no waiting on the costly request either: it lent the bystander a seat.
    const seat = (await bystander.outcome) as Release;
    expect(typeof seat).toBe('function');
    expect(gate.running).toBe(2);
    // A flow borrows one seat at a time: the bystander's second waits, as does the flood's next.
    expect(gate.waiting).toBe(2);
    seat();
    const order = grantOrder([
      { label: 'flood', wait: flood },
      { label: 'bystander again', wait: again },
    ]);
    await vi.advanceTimersByTimeAsync(0);
    // The flood's next needs both seats: it runs once the costly one ends, never beside it.
    expect(order).toEqual(['bystander again']);
    heavy();
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['bystander again', 'flood']);
  });

  it('lends a borrower one seat, however wide its own requests have been', async () => {
    let active = 0;
    const { admission: gate, load } = admission({ minSeats: 2, loopActiveMs: () => active });
    // Each ran alone: the flood's request took 100 ms of loop, the bystander's 10 ms. Both flows
    // are two seats wide now, and the flood has used ten times as much.
    for (const [tenant, ms] of [
      ['account:flood', 100],
      ['account:bystander', 10],
    ] as const) {
      const done = released(gate.admit(tenant));
      active += ms;
      done();
    }
    load.set(true);
    released(gate.admit('account:flood'));
    expect(gate.running).toBe(2);
    let granted = false;
    void waiting(gate.admit('account:bystander')).outcome.then((outcome) => {
      granted = typeof outcome === 'function';
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(granted).toBe(true);
    expect(gate.running).toBe(2);
  });

  it('says a flow outweighs another that used far less lately, while the loop is busy', () => {
    let active = 0;
    const { admission: gate, load } = admission({ minSeats: 4, loopActiveMs: () => active });
    const flood = released(gate.admit('account:flood'));
    active += 100;
    flood();
    released(gate.admit('account:flood'))();
    released(gate.admit('account:bystander'))();
    // The loop has room: no one is held back.
    load.sample(1);
    expect(gate.ledger.outweighs('account:flood')).toBe(false);
    load.set(true);
    load.sample(1);
    expect(gate.ledger.outweighs('account:flood')).toBe(true);
    expect(gate.ledger.outweighs('account:bystander')).toBe(false);
    // Once the bystander's use has faded, it no longer counts.
    clock += 10 * USE_HALF_LIFE_MS;
    load.sample(1);
    expect(gate.ledger.outweighs('account:flood')).toBe(false);
  });

  it('refuses at once past maxWaiting, and a request that waited maxWaitMs', async () => {
    const { admission: gate, load } = admission({ maxWaiting: 2, maxWaitMs: 1_000 });
    load.set(true);
    released(gate.admit('account:flood'));
    const lined = [gate.admit('account:flood'), gate.admit('account:flood')].map(waiting);
    const third = gate.admit('account:flood');
    expect(isRefusal(third) && third.refused).toBe('line-full');
    expect(isRefusal(third) && third.retryAfterSeconds).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    const outcomes = await Promise.all(lined.map((line) => line.outcome));
    expect(outcomes.map((o) => typeof o === 'object' && o.refused)).toEqual([
      'waited-too-long',
      'waited-too-long',
    ]);
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
    const gone = waiting(gate.admit('account:flood'));
    const stays = [gate.admit('account:flood'), gate.admit('account:other')].map(waiting);
    gone.cancel();
    expect(gate.waiting).toBe(2);
    load.set(false);
    const granted = await Promise.all(stays.map((s) => s.outcome));
    expect(granted.every((g) => typeof g === 'function')).toBe(true);
    expect(gate.waiting).toBe(0);
  });

  it('with minSeats 0, is off', () => {
    const { admission: gate, load } = admission({ minSeats: 0 });
    load.set(true);
    for (let i = 0; i < 20; i += 1) released(gate.admit('account:flood'));
  });

  it('names tenants by kind only, and groups unverified pairs', () => {
    expect(tenantKind('account:x')).toBe('account');
    expect(tenantKind(`${UNVERIFIED}:p`)).toBe('unverified');
    expect(tenantKind(ANONYMOUS)).toBe('anonymous');
    expect(groupOf(`${UNVERIFIED}:p`)).toBe(UNVERIFIED);
    expect(groupOf('account:x')).toBe('account:x');
  });
});

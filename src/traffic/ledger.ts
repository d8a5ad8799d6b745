/**
 * The one ledger of work: what each flow (an account, the class of unverified credentials, or
 * the anonymous) used lately, in work units, and what its requests cost. Requests' seats
 * (fair-admission.ts) and calls' slots (fair-scheduler.ts) are ordered by it, and both charge it:
 * a request its price and what it cost, a call its caller's bill (this folder's README, "The
 * flow").
 */
import { LRUCache } from 'lru-cache';

/** How fast a flow's use is forgotten: "lately" is the last second or two. */
export const USE_HALF_LIFE_MS = 1_000;
/** How fast a flow's cost per request follows its latest requests. */
export const COST_WEIGHT = 0.2;
/** A running request lends a seat to an idle flow that used less than 1/LEND_BELOW of its flow's use. */
export const LEND_BELOW = 4;
/**
 * The line protects someone only while one flow has used this share of all the use lately beside
 * another; among alike flows fewer seats only cost throughput (1.6-2x, measured).
 */
const DOMINANT_SHARE = 0.25;
/** Units another flow must have used lately for the line to be protecting it. */
const OTHERS_AT_LEAST = 1;
/**
 * Costs per request of flows forgotten while idle, so a flow that comes back is priced as it was
 * (a burst, its refunds, a pause: its next burst was priced at 1 a request). Bounded: an entry is
 * a key and a number.
 */
const REMEMBERED_COSTS = 10_000;
/** How fast the price of a flow never seen follows the requests of all flows. */
const PRIOR_WEIGHT = 0.05;

/** One flow: its decaying use, and its running requests and lines (one per tenant) of `W`. */
export interface Flow<W = unknown> {
  use: number;
  usedAt: number;
  running: number;
  /** What its requests have cost lately, in units each (a moving average). */
  cost: number;
  /** Lines by tenant, in turn order (a served tenant goes to the back). */
  readonly lines: Map<string, W[]>;
}

export class Ledger<W = unknown> {
  private readonly flows = new Map<string, Flow<W>>();
  /** While the loop is busy, the least use lately of a flow that used at least OTHERS_AT_LEAST. */
  private lightest = Number.POSITIVE_INFINITY;
  private lastPrune = 0;
  private readonly rememberedCosts = new LRUCache<string, number>({ max: REMEMBERED_COSTS });
  /**
   * What a request of any flow cost lately: the price of a flow never seen, so 200 accounts each
   * sending its first costly page are priced as costly (at 1, each went ahead of a bystander).
   */
  private priorCost = 1;

  constructor(readonly now: () => number) {}

  /** What `key`'s flow has used lately, in decayed work units (0 for one not seen lately). */
  useOf(key: string): number {
    const flow = this.flows.get(key);
    return flow ? this.decayed(flow, this.now()) : 0;
  }

  /**
   * On a busy loop, whether another flow used under 1/LEND_BELOW of `key`'s flow lately (the
   * lending rule), to cap the calls in flight of the heavier (fair-scheduler.ts). The lightest is
   * known only while the loop is busy (`contended`), and is another flow whenever this holds: a
   * flow never outweighs itself.
   */
  outweighs(key: string): boolean {
    const flow = this.flows.get(key);
    return flow !== undefined && LEND_BELOW * this.lightest < this.decayed(flow, this.now());
  }

  /** Charges work done for `key`'s flow outside its requests: calls made for it, polls too. */
  chargeWork(key: string, units: number): void {
    this.charge(this.flow(key), units);
  }

  flow(key: string): Flow<W> {
    let flow = this.flows.get(key);
    if (!flow) {
      this.prune();
      const cost = this.rememberedCosts.get(key) ?? this.priorCost;
      flow = { use: 0, usedAt: this.now(), running: 0, cost, lines: new Map() };
      this.flows.set(key, flow);
    }
    return flow;
  }

  /** The flow's use now, decayed since it was last charged. */
  decayed(flow: Flow<W>, now: number): number {
    return flow.use * 2 ** ((flow.usedAt - now) / USE_HALF_LIFE_MS);
  }

  charge(flow: Flow<W>, units: number): void {
    const now = this.now();
    flow.use = Math.max(0, this.decayed(flow, now) + units);
    flow.usedAt = now;
  }

  /** A request of `flow` ended having cost `units`: its flow's price and the prior follow. */
  priced(flow: Flow<W>, units: number): void {
    flow.cost += COST_WEIGHT * (units - flow.cost);
    this.priorCost += PRIOR_WEIGHT * (units - this.priorCost);
  }

  /** Whether one flow used DOMINANT_SHARE of all lately beside another; notes the lightest. */
  contended(): boolean {
    const now = this.now();
    let total = 0;
    let most = 0;
    let lightest = Number.POSITIVE_INFINITY;
    for (const flow of this.flows.values()) {
      const use = this.decayed(flow, now);
      total += use;
      most = Math.max(most, use);
      if (use >= OTHERS_AT_LEAST) lightest = Math.min(lightest, use);
    }
    this.lightest = lightest;
    return most >= DOMINANT_SHARE * total && total - most >= OTHERS_AT_LEAST;
  }

  /** The loop has room: no flow outweighs another until it is busy again. */
  calm(): void {
    this.lightest = Number.POSITIVE_INFINITY;
  }

  /** Forgets idle flows whose use has decayed to nothing (at most once per half-life). */
  private prune(): void {
    const now = this.now();
    if (now - this.lastPrune < USE_HALF_LIFE_MS) return;
    this.lastPrune = now;
    for (const [key, flow] of this.flows) {
      if (flow.running === 0 && flow.lines.size === 0 && this.decayed(flow, now) < 0.01) {
        this.flows.delete(key);
        this.rememberedCosts.set(key, flow.cost);
      }
    }
  }
}

/**
 * Admission of GraphQL requests (and WebSocket `connection_init`s) before any of their work starts:
 * one work-conserving fair queue, after Kubernetes' API Priority and Fairness (this folder's README,
 * "The flow"). Written by hand: a library limiter knows none of our flows.
 */
import { performance as perfHooks } from 'node:perf_hooks';
import type { AdmissionSettings } from '../config/config.js';
import { COST_WEIGHT, LEND_BELOW, Ledger, type Flow as LedgerFlow } from './ledger.js';

/** `account:<account>`, `unverified:<pair>`, or `anonymous`. */
export type Tenant = string;
export const UNVERIFIED: Tenant = 'unverified';
export const ANONYMOUS: Tenant = 'anonymous';

/**
 * Frees a request's seat, or a call's slot (fair-scheduler.ts), told what it showed; idempotent.
 * `price`, once a request's document is parsed, charges what that document is expected to cost
 * (see `take`).
 */
export type Release = ((outcome?: Outcome) => void) & {
  readonly price?: (document: object, estimate: number) => Promise<Refusal | undefined> | undefined;
};

/** What a seat or a slot showed when it was freed. */
export interface Outcome {
  /** A request's answer bytes, when known. */
  readonly bytes?: number;
  /** A call's round trip when the service answered: it feeds the adaptive limit. */
  readonly rttMs?: number;
  /** The operation answered (its latency is judged against its own baseline). */
  readonly operation?: string;
  readonly overloaded?: boolean;
}

/** Bytes of answer that count as much work as one request (a number list is about 300). */
export const BYTES_PER_UNIT = 16 * 1024;
/** Work units per upstream call, calibrated on the bench's CPU per request (page 2.6, fan-out 110). */
export const UNITS_PER_CALL = 0.5;
/** Milliseconds of CPU that count as one unit (the small query takes about 0.25 ms in all). */
export const CPU_MS_PER_UNIT = 0.25;
/** Units of work one seat stands for: a page is about 2.6, a small query 1.5. */
export const UNITS_PER_SEAT = 4;
/** Waiting this long counts as one unit less use: requests of flows that used alike go in order. */
const WAIT_MS_PER_UNIT = 10;
/** Seats grow by GROW per window while requests wait and utilization is under ROOM_BELOW ... */
const GROW = 1.5;
const ROOM_BELOW = 0.9;
/** ... and shrink by SHRINK while it is at SATURATED_AT or more. */
const SHRINK = 0.9;
const SATURATED_AT = 0.98;
const RETRY_AFTER_SECONDS = 1;
/**
 * Units per item of a document's static cost estimate (estimate-cost.ts), calibrated on a page:
 * 100 messages and their numbers, about 2 units of CPU and bytes.
 */
export const UNITS_PER_ITEM = 0.02;
/**
 * A request expected to cost this much (25 ms of the loop; a small query measures 1-25 beside
 * others, a page about 2.6 alone) is costly work ...
 */
const COSTLY_UNITS = 100;
/** ... of which at most this much runs at once (100 ms of the loop), or one request larger alone. */
const COSTLY_IN_FLIGHT = 400;
/**
 * While the loop is calm, the work admitted within SURGE_MS past which it is called busy at once:
 * half a window of the loop's time (loop-monitor.ts's WINDOW_MS, at CPU_MS_PER_UNIT) in one tick.
 * A flood's onset priced up to 342 units in 10 ms; the heaviest steady load, 6,400 small queries
 * a second at about 2 units each, 130. Counted against the loop's own pace instead (4 units a
 * ms), a steady load priced above it (a request's 1 unit is not all CPU) went busy at 0.8 of the
 * loop and lost a fifth of its req/s.
 */
const SURGE_UNITS = 200;
const SURGE_MS = 10;

export interface Refusal {
  readonly refused: 'line-full' | 'waited-too-long';
  readonly retryAfterSeconds: number;
}

/** A request that has to wait: its outcome, and a way to leave the line (client gone). */
export interface Waiting {
  readonly outcome: Promise<Release | Refusal>;
  cancel(): void;
}

/** The loop's load, as LoopMonitor reports it. */
export interface LoopLoad {
  readonly busy: boolean;
  readonly utilization: number;
  onChange(listener: (busy: boolean) => void): void;
  onSample?(listener: (utilization: number) => void): void;
  /** Work the loop cannot do within a window was just admitted: busy from now, as if measured. */
  surge?(): void;
}

/** `minSeats` run while the loop is busy (0: admission off); a line holds `maxWaiting`. */
export interface AdmissionOptions extends AdmissionSettings {
  readonly load: LoopLoad;
  readonly now?: () => number;
  /** The loop's busy time so far, in ms. @default perf_hooks eventLoopUtilization().active */
  readonly loopActiveMs?: () => number;
  /** Told of each refusal (metrics, logs), with the kind of tenant, never who. */
  readonly onRefused?: (kind: TenantKind, refusal: Refusal) => void;
}
export type TenantKind = 'account' | 'unverified' | 'anonymous';

export const tenantKind = (tenant: Tenant): TenantKind =>
  tenant.startsWith(UNVERIFIED)
    ? 'unverified'
    : tenant.startsWith(ANONYMOUS)
      ? 'anonymous'
      : 'account';

/** The tenant of an account whose credentials the service accepted lately. */
export const accountTenant = (account: string): Tenant => `account:${account}`;

/** The tenant of one credential pair the service has not accepted lately. */
export const unverifiedPair = (pair: string): Tenant => `${UNVERIFIED}:${pair}`;

/** The flow a tenant's work counts towards: its own, or for an unverified pair, the class. */
export const groupOf = (tenant: Tenant): Tenant =>
  tenant.startsWith(`${UNVERIFIED}:`) ? UNVERIFIED : tenant;

/** What a request has been charged so far, and the document it runs once it is known. */
interface Bill {
  readonly tenant: Tenant;
  prepaid: number;
  document?: object;
  /** Its expected units while it counts as costly work (see `runCostly`). */
  costly?: number;
}

/** A costly request that waits, seated, for room among the costly work running. */
interface CostlyWaiter {
  readonly flow: Flow;
  readonly bill: Bill;
  readonly units: number;
  readonly resume: (refusal?: Refusal) => void;
}

interface Waiter {
  readonly since: number;
  /** What it was charged on arrival (its flow's cost per request then). */
  readonly bill: Bill;
  grant(release: Release): void;
}

type Flow = LedgerFlow<Waiter>;

export class Admission {
  /** What each flow used lately: seats are ordered by it, and calls' slots (traffic.ts). */
  readonly ledger: Ledger<Waiter>;
  /** Flows with requests waiting: a dispatch looks at these, not at every flow seen lately. */
  private readonly backlogged = new Set<Flow>();
  private runningCount = 0;
  /** Busy time shared by weight (a request's: its flow's cost, then its price), per unit of weight. */
  private readonly shares = { weight: 0, requests: 0, loopPerWeight: 0, activeAt: 0 };
  private waitingCount = 0;
  /** The seat limit while the loop is busy (Infinity while it is not). */
  private limit = Number.POSITIVE_INFINITY;
  /** Running requests that hold seats, and their flows: the seats they may lend. */
  private readonly holders = new Map<{ width: number }, Flow>();
  /** What each parsed document cost when it last ran; held only while the document is cached. */
  private readonly documentCosts = new WeakMap<object, number>();
  /** Costly requests' expected units running, and those waiting for room (see `runCostly`). */
  private readonly costly = { units: 0, running: 0, waiting: [] as CostlyWaiter[] };
  /** The work admitted while the loop was calm, since `since` (see `priceCalm`). */
  private calm = { since: Number.NEGATIVE_INFINITY, units: 0 };
  private readonly loopActiveMs: () => number;

  constructor(private readonly options: AdmissionOptions) {
    this.ledger = new Ledger(options.now ?? (() => performance.now()));
    this.loopActiveMs = options.loopActiveMs ?? (() => perfHooks.eventLoopUtilization().active);
    if (options.load.busy) this.limit = options.minSeats;
    options.load.onChange((busy) => {
      this.limit = busy ? Math.max(options.minSeats, this.runningCount) : Number.POSITIVE_INFINITY;
      if (!busy) this.ledger.calm();
      this.dispatch();
    });
    options.load.onSample?.((utilization) => this.adjust(utilization));
  }

  get waiting(): number {
    return this.waitingCount;
  }

  get running(): number {
    return this.runningCount;
  }

  /** How many requests may run now (Infinity while the loop has room). */
  get seats(): number {
    return this.limit;
  }

  /** A Release when the request may run now; otherwise its place in line, or a refusal. */
  admit(tenant: Tenant): Release | Waiting | Refusal {
    if (this.options.minSeats <= 0) return NO_SEAT;
    const flow = this.ledger.flow(groupOf(tenant));
    // Priced on arrival at what its flow's requests cost lately, before it waits or runs: a
    // flow's waiting requests count against it already, so a flood's line never goes ahead of a
    // flow that asked once, and a burst of costly requests weighs what it will cost before any
    // of it ends (charged only when each ended, eight at once looked lighter than a bystander
    // polling, which then waited 5 s and was refused). The measured cost corrects it at release.
    const bill: Bill = { tenant, prepaid: Math.max(1, flow.cost) };
    this.ledger.charge(flow, bill.prepaid);
    if (this.limit === Number.POSITIVE_INFINITY) this.priceCalm(bill.prepaid);
    if (this.waitingCount === 0 && this.fits(flow)) return this.take(flow, bill);
    const line = flow.lines.get(tenant);
    if ((line?.length ?? 0) >= this.options.maxWaiting) return this.refuse(tenant, 'line-full');
    let settle: (outcome: Release | Refusal) => void = () => undefined;
    const outcome = new Promise<Release | Refusal>((resolve) => (settle = resolve));
    const timer = setTimeout(() => {
      if (this.remove(flow, tenant, waiter)) settle(this.refuse(tenant, 'waited-too-long'));
    }, this.options.maxWaitMs);
    timer.unref();
    const waiter: Waiter = {
      since: this.ledger.now(),
      bill,
      grant: (release) => {
        clearTimeout(timer);
        settle(release);
      },
    };
    if (line) line.push(waiter);
    else flow.lines.set(tenant, [waiter]);
    this.backlogged.add(flow);
    this.waitingCount += 1;
    this.dispatch();
    return {
      outcome,
      cancel: () => {
        clearTimeout(timer);
        if (this.remove(flow, tenant, waiter)) this.dispatch();
      },
    };
  }

  /**
   * Prices the calm loop too: a burst admitted at once is work the monitor sees only once it runs,
   * a window later, and seats then start from all that is running (256 requests of invented
   * credentials at once held a bystander's first answers 150-545 ms). Half a window's work
   * admitted within one tick makes the loop busy now; steady traffic is priced well under it.
   */
  private priceCalm(units: number): void {
    const now = this.ledger.now();
    if (now - this.calm.since >= SURGE_MS) this.calm = { since: now, units: 0 };
    this.calm.units += units;
    if (this.calm.units > SURGE_UNITS) this.options.load.surge?.();
  }

  /**
   * Follows the loop while it is busy. While one flow dominates beside others, seats shrink when
   * it is saturated, so the line, where fairness applies, holds the excess instead of the loop's
   * FIFO; while flows are alike, seats grow while requests wait: a line of equals protects no one.
   */
  private adjust(utilization: number): void {
    if (this.limit === Number.POSITIVE_INFINITY) return;
    // The loop's own utilization: the process's CPU read "room" on a shared machine.
    const contended = this.ledger.contended();
    if (this.waitingCount > 0 && (!contended || utilization < ROOM_BELOW)) {
      this.limit = Math.ceil(Math.max(this.limit, this.runningCount) * GROW);
      this.dispatch();
    } else if (contended && utilization >= SATURATED_AT) {
      this.limit = Math.max(this.options.minSeats, Math.floor(this.limit * SHRINK));
    }
  }

  private take(flow: Flow, bill: Bill, width = this.widthOf(flow)): Release {
    const held = { width };
    // Its weight in the loop's sharing: its flow's cost per request, then its own price.
    let weight = flow.cost;
    this.runningCount += held.width;
    this.holders.set(held, flow);
    flow.running += 1;
    // Its share of the loop, counted only while it runs (not while it waits for costly room).
    let loopMs = 0;
    let startedAt: number | null = this.shareLoop(weight);
    const pause = (): void => {
      if (startedAt === null) return;
      loopMs += weight * (this.shareLoop(-weight) - startedAt);
      startedAt = null;
    };
    let resume: ((refusal?: Refusal) => void) | null = null;
    let refused = false;
    let released = false;
    // Priced again once its document is known: the flow's price is a guess (a flow whose pair was
    // just accepted is new, priced at the prior: its burst of 8 documents of 950 ms each weighed
    // less than a bystander's polling, so no seat was lent and the bystander waited 3.6 s). What
    // this document cost last time (or, never run, its static estimate) is charged at once when
    // it is more; the measured cost still settles the bill at release. A costly document then
    // waits for room among costly work (see `runCostly`), refused if its seat is given up (its
    // client left) or it waits maxWaitMs. Priced once: a second price would count it twice.
    const price = (
      document: object,
      estimate: number,
    ): Promise<Refusal | undefined> | undefined => {
      if (released || bill.document) return undefined;
      bill.document = document;
      const expected = this.documentCosts.get(document) ?? estimate;
      if (expected > bill.prepaid) {
        this.ledger.charge(flow, expected - bill.prepaid);
        bill.prepaid = expected;
        // A waiting bystander may now be lent a seat.
        this.dispatch();
      }
      pause();
      weight = Math.max(1, expected);
      // The room it takes among costly work: its static estimate when that is more. Measured
      // costs are shares of the loop, so sixteen costly pages beside a light query measured
      // alike (50 and 27 units); the estimate tells them apart before they run.
      const room = Math.max(expected, estimate);
      if (room < COSTLY_UNITS || this.hasCostlyRoom(room)) {
        if (room >= COSTLY_UNITS) this.startCostly(bill, room);
        startedAt = this.shareLoop(weight);
        return undefined;
      }
      return new Promise<Refusal | undefined>((settle) => {
        const timer = setTimeout(() => {
          this.costly.waiting = this.costly.waiting.filter((entry) => entry.resume !== resume);
          resume?.(this.refuse(bill.tenant, 'waited-too-long'));
        }, this.options.maxWaitMs);
        timer.unref();
        resume = (refusal) => {
          clearTimeout(timer);
          resume = null;
          if (refusal) refused = true;
          else startedAt = this.shareLoop(weight);
          settle(refusal);
        };
        this.costly.waiting.push({ flow, bill, units: room, resume });
      });
    };
    const release = (cost?: Outcome): void => {
      if (released) return;
      released = true;
      const waited = resume;
      if (waited) {
        this.costly.waiting = this.costly.waiting.filter((entry) => entry.resume !== waited);
        waited({ refused: 'waited-too-long', retryAfterSeconds: RETRY_AFTER_SECONDS });
      } else if (bill.costly !== undefined) {
        this.costly.units -= bill.costly;
        this.costly.running -= 1;
        this.runCostly();
      }
      // What it took of the loop: the busy time while it ran, shared with the requests beside it
      // by weight, their flows' cost until priced, then their own (evenly, a bystander beside a
      // flood was charged as much as it).
      pause();
      const units = (cost?.bytes ?? 0) / BYTES_PER_UNIT + loopMs / CPU_MS_PER_UNIT;
      // What it cost (a unit for asking, and its work) less what it paid on arrival: a price
      // set too high is given back, never below nothing.
      this.ledger.charge(flow, 1 + units - bill.prepaid);
      this.ledger.priced(flow, 1 + units);
      // A moving average too: one answer slowed by its neighbours does not make a document costly.
      const known = bill.document && this.documentCosts.get(bill.document);
      if (bill.document && !refused)
        this.documentCosts.set(
          bill.document,
          known ? known + COST_WEIGHT * (1 + units - known) : 1 + units,
        );
      this.runningCount -= held.width;
      this.holders.delete(held);
      flow.running -= 1;
      this.dispatch();
    };
    return Object.assign(release, { price });
  }

  /**
   * Starts costly requests waiting for room, the flow that used least lately first, while they
   * fit beside the costly work running (one always may run). The loop runs one piece of each
   * request in turn: eight documents of 950 ms admitted at once on an idle loop held a bystander's
   * every answer 150-290 ms for 4 s; with at most COSTLY_IN_FLIGHT of them, a light request waits
   * behind that much at most.
   */
  private runCostly(): void {
    const now = this.ledger.now();
    const waiting = this.costly.waiting;
    waiting.sort((a, b) => this.ledger.decayed(a.flow, now) - this.ledger.decayed(b.flow, now));
    while (waiting.length > 0) {
      const next = waiting[0] as CostlyWaiter;
      if (!this.hasCostlyRoom(next.units)) return;
      waiting.shift();
      this.startCostly(next.bill, next.units);
      next.resume();
    }
  }

  /** Whether `units` of costly work fit beside what runs (alone, it always does). */
  private hasCostlyRoom(units: number): boolean {
    return this.costly.running === 0 || this.costly.units + units <= COSTLY_IN_FLIGHT;
  }

  private startCostly(bill: Bill, units: number): void {
    bill.costly = units;
    this.costly.units += units;
    this.costly.running += 1;
  }

  /** Adds the busy time since the last change to the running weight's share, then `weight`. */
  private shareLoop(weight: number): number {
    const shares = this.shares;
    const active = this.loopActiveMs();
    if (shares.requests > 0) shares.loopPerWeight += (active - shares.activeAt) / shares.weight;
    shares.activeAt = active;
    shares.requests += Math.sign(weight);
    shares.weight = shares.requests === 0 ? 0 : shares.weight + weight;
    return shares.loopPerWeight;
  }

  /**
   * A request holds its seats only until a flow with nothing running, that used far less, waits:
   * it lends it one, so a bystander runs beside a costly request at once (nothing can preempt a
   * request; it can stop others waiting on one). A borrower runs on one seat however wide, and
   * each lend divides the use by LEND_BELOW: few are lent. Whether a seat is free for `flow`.
   */
  private lendTo(flow: Flow, now: number): boolean {
    if (flow.running > 0) return false;
    const use = this.ledger.decayed(flow, now);
    for (const [held, owner] of this.holders) {
      if (this.runningCount < this.limit) return true;
      if (this.ledger.decayed(owner, now) <= LEND_BELOW * use) continue;
      held.width -= 1;
      this.runningCount -= 1;
      if (held.width === 0) this.holders.delete(held);
    }
    return this.runningCount < this.limit;
  }

  /**
   * Seats one request of `flow` holds while the loop is busy: one per UNITS_PER_SEAT of its recent
   * cost, up to every seat, so a flood of costly documents runs one at a time.
   */
  private widthOf(flow: Flow): number {
    if (this.limit === Number.POSITIVE_INFINITY) return 1;
    return Math.min(this.limit, Math.max(1, Math.floor(flow.cost / UNITS_PER_SEAT)));
  }

  /** Whether a request of `flow` may take its seats now (alone, it always may). */
  private fits(flow: Flow): boolean {
    return this.runningCount === 0 || this.runningCount + this.widthOf(flow) <= this.limit;
  }

  private remove(flow: Flow, tenant: Tenant, waiter: Waiter): boolean {
    const line = flow.lines.get(tenant);
    const index = line?.indexOf(waiter) ?? -1;
    if (!line || index < 0) return false;
    line.splice(index, 1);
    if (line.length === 0) flow.lines.delete(tenant);
    if (flow.lines.size === 0) this.backlogged.delete(flow);
    this.waitingCount -= 1;
    return true;
  }

  /** Fills free seats: each goes to the waiting flow that has used least lately. */
  private dispatch(): void {
    while (this.waitingCount > 0) {
      const now = this.ledger.now();
      let next: Flow | undefined;
      let least = Number.POSITIVE_INFINITY;
      for (const flow of this.backlogged) {
        // Less what its oldest request has waited: among alike flows the longest waiting goes
        // first (without it, an unlucky one of 256 alike accounts waited 600 ms, 150x the p50).
        const head = (flow.lines.values().next().value as Waiter[])[0] as Waiter;
        const use = this.ledger.decayed(flow, now) - (now - head.since) / WAIT_MS_PER_UNIT;
        if (use < least) {
          least = use;
          next = flow;
        }
      }
      if (!next) return;
      // Strict order: a wide request waits for its seats, not overtaken by narrower ones.
      const width = this.fits(next) ? this.widthOf(next) : this.lendTo(next, now) ? 1 : 0;
      if (width === 0) return;
      // The flow's lines take turns: its first tenant gives its oldest request, then goes last.
      const [tenant, line] = next.lines.entries().next().value as [Tenant, Waiter[]];
      next.lines.delete(tenant);
      const waiter = line.shift() as Waiter;
      if (line.length > 0) next.lines.set(tenant, line);
      else if (next.lines.size === 0) this.backlogged.delete(next);
      this.waitingCount -= 1;
      waiter.grant(this.take(next, waiter.bill, width));
    }
  }

  private refuse(tenant: Tenant, refused: Refusal['refused']): Refusal {
    const refusal = { refused, retryAfterSeconds: RETRY_AFTER_SECONDS };
    this.options.onRefused?.(tenantKind(tenant), refusal);
    return refusal;
  }
}

/** A seat that frees nothing: admission off, or a request that holds none. */
export const NO_SEAT: Release = () => undefined;

export const isRefusal = (value: Release | Waiting | Refusal): value is Refusal =>
  typeof value === 'object' && 'refused' in value;

/**
 * The turn of a caller that may leave while it waits (its `close`): leaving quits the line, and a
 * place granted once it is `gone` is handed back at once (null).
 */
export async function turnUnlessGone(
  outcome: Release | Waiting | Refusal,
  door: Pick<NodeJS.EventEmitter, 'once' | 'off'>,
  gone: () => boolean,
): Promise<Release | Refusal | null> {
  if (typeof outcome === 'function' || isRefusal(outcome)) return outcome;
  const leave = (): void => outcome.cancel();
  door.once('close', leave);
  const granted = await outcome.outcome;
  door.off('close', leave);
  if (!gone()) return granted;
  if (typeof granted === 'function') granted();
  return null;
}

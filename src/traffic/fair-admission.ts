/**
 * Admission of GraphQL requests, per tenant, before any of their work starts (body, parse,
 * validation, execution). A tenant is an account whose credentials the service accepted lately,
 * one credential pair this copy has not seen accepted (`unverified:<pair>`: new, refused or
 * invented; never one line shared by every new user, so a real account's first request never
 * waits behind a flood of invented ones), or the `anonymous` pool (no or malformed credentials).
 *
 * While the event loop has room, every request goes in at once and this costs a counter. Once the
 * loop is busy (loop-utilization.ts) and more than one tenant has been active
 * within ACTIVE_MS, tenants take turns:
 * - each may have at most `busyConcurrency` requests running; the others wait in its line, and
 *   lines are served round-robin;
 * - a tenant that used over 1.5 times its share of the recent work rests after each request for
 *   REST_FACTOR times as long as it took, times the number of other active tenants (at most
 *   MAX_REST_MS): a flood of
 *   cheap requests, sent one after another, then leaves room too. Work is counted in units that
 *   stand for CPU time: one per request, one per BYTES_PER_UNIT it wrote back, and UNITS_PER_CALL
 *   per call made to the service for the tenant (its requests' and its subscriptions' polls), so
 *   a tenant asking for 1 MB answers or 200-number fan-outs uses its share in far fewer requests
 *   than one asking for number lists. This gives up some of the
 *   flood's throughput (the loop may idle while a quiet tenant pauses) for the others' latency;
 *   tenants asking alike never rest, and once the loop has been quiet for a second, turns end.
 * A tenant that was quiet therefore goes in at once, next to at most `busyConcurrency` requests of
 * each other tenant, however many a flooding tenant has sent; a flood of invented credentials pays
 * as many tenants as pairs it invents, each refused from memory after one call (traffic.ts). A line holds at most `maxWaiting` requests and a
 * request waits at most `maxWaitMs`: past either it is refused (429, Retry-After) rather than kept.
 *
 * Written by hand: which tenant a request belongs to (verified accounts, shared pools for the
 * rest) is ours, and the rest is a few counters and lines.
 */

import { RoundRobinLines } from './round-robin-lines.js';

/** `account:<accountId>`, `unverified:<pair fingerprint>`, or `anonymous`. */
export type Tenant = string;
export const UNVERIFIED: Tenant = 'unverified';
export const ANONYMOUS: Tenant = 'anonymous';

/** Frees the request's place, told the bytes its answer took when known; idempotent. */
export type Release = (bytesWritten?: number) => void;

/** Bytes of answer that count as much work as one request (a number list is about 300). */
export const BYTES_PER_UNIT = 16 * 1024;
/**
 * Work units per upstream call (sending it, parsing its answer, completing what it returned).
 * Calibrated on the bench's CPU per request, with the small query (one call) as about one unit:
 * a 50-message page (one call, 17 KB) costs about 2.2 small queries, and a 200-number fan-out
 * (201 calls, 135 KB) about 100 to 130; one per request, 1/2 per call and one per 16 KiB gives
 * 1.5, 2.6 and 110.
 */
export const UNITS_PER_CALL = 0.5;

export interface Refusal {
  readonly refused: 'line-full' | 'waited-too-long';
  /** Seconds the client should wait before asking again. */
  readonly retryAfterSeconds: number;
}

/** A request that has to wait: its outcome, and a way to leave the line (client gone). */
export interface Waiting {
  readonly outcome: Promise<Release | Refusal>;
  cancel(): void;
}

export interface LoopLoad {
  readonly busy: boolean;
  /** The last window's event-loop utilization, 0 to 1 (reported as a metric). */
  readonly utilization: number;
  onChange(listener: (busy: boolean) => void): () => void;
}

export interface AdmissionOptions {
  /** Requests one tenant may have running while the loop is busy; 0 turns admission off. */
  readonly busyConcurrency: number;
  /** Requests one tenant may have waiting; more are refused at once. */
  readonly maxWaiting: number;
  /** The longest a request waits before it is refused, in ms. */
  readonly maxWaitMs: number;
  readonly load: LoopLoad;
  readonly now?: () => number;
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

/** The tenant of one credential pair the service has not accepted lately. */
export const unverifiedPair = (fingerprint: string): Tenant => `${UNVERIFIED}:${fingerprint}`;

/**
 * Whose turn, share and rest a tenant's requests count towards: its own, except that every
 * unverified pair counts towards one `unverified` group. Each pair keeps its own line (a new
 * user's first request is never refused for a flood's full line), but a flood inventing a pair per
 * request is one tenant, not thousands: otherwise every one-shot pair counts as an active tenant,
 * an account's share becomes 1/1000 and it rests 250 ms after each request (a bystander's p50
 * went from 8.7 to 222 ms under `npm run soak -- --scenario=invented-credentials`).
 */
export const groupOf = (tenant: Tenant): Tenant =>
  tenant.startsWith(`${UNVERIFIED}:`) ? UNVERIFIED : tenant;

/**
 * A tenant counts as active this long after its last request arrived: long enough to cover a
 * client's pause between requests, short enough that one gone quiet stops counting at once.
 */
export const ACTIVE_MS = 250;

/**
 * How much longer than its request a tenant past its share rests (per other active tenant), and
 * the longest rest. On the aliased-history flood (bench/attack-floods.ts: 350 ms of CPU per
 * request), rests as long as the request and at most ACTIVE_MS left another account's p50 at
 * 3.6x and 6.9x its idle value in two runs; four times as long and at most 1 s, 1.2-2.0x in four
 * runs alternating with them. A rest in proportion to how far past its share a tenant is read
 * 1.7-3.1x in three: with two tenants, the most one can be past its share is twice.
 */
export const REST_FACTOR = 4;
export const MAX_REST_MS = 1_000;
const RETRY_AFTER_SECONDS = 1;

interface Waiter {
  grant(release: Release): void;
}

export class Admission {
  private readonly running = new Map<Tenant, number>();
  /** While tenants take turns: when each may start its next request (see `rest`). */
  private readonly readyAt = new Map<Tenant, number>();
  /** Work units used per tenant in this window of ACTIVE_MS and the one before, and in all. */
  private usedNow = new Map<Tenant, number>();
  private usedBefore = new Map<Tenant, number>();
  private usedTotal = 0;
  private usedBeforeTotal = 0;
  private windowStart = 0;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Number.POSITIVE_INFINITY;
  /** Waiting requests, one line per tenant, served round-robin. */
  private readonly lines = new RoundRobinLines<Waiter>();
  /** When each recently active tenant last sent a request. */
  private readonly lastSeen = new Map<Tenant, number>();
  private lastPrune = 0;
  private readonly now: () => number;

  constructor(private readonly options: AdmissionOptions) {
    this.now = options.now ?? (() => performance.now());
    options.load.onChange((busy) => {
      if (!busy) this.dispatch();
    });
  }

  /** Requests waiting, all tenants together. */
  get waiting(): number {
    return this.lines.waiting;
  }

  /**
   * Charges work done for `tenant` outside the requests admission counts: calls made to the
   * service for it (traffic.ts tells each one), its subscriptions' polls included.
   */
  chargeWork(tenant: Tenant, units: number): void {
    this.charge(groupOf(tenant), units, this.now());
  }

  /** Whether tenants take turns now (the loop is busy and shared). */
  get turnTaking(): boolean {
    return this.options.load.busy && this.activeTenants() > 1;
  }

  /** A Release when the request may run now; otherwise its place in line, or a refusal. */
  admit(tenant: Tenant): Release | Waiting | Refusal {
    if (this.options.busyConcurrency <= 0) return noop;
    const now = this.now();
    this.prune(now);
    const group = groupOf(tenant);
    this.lastSeen.delete(group);
    this.lastSeen.set(group, now);
    const queued = this.lines.lengthOf(tenant);
    if (queued === 0 && this.mayStart(group, now)) return this.take(group);
    if (queued >= this.options.maxWaiting) {
      return this.refuse(tenant, 'line-full');
    }
    let settle: (outcome: Release | Refusal) => void = () => undefined;
    const outcome = new Promise<Release | Refusal>((resolve) => (settle = resolve));
    const timer = setTimeout(() => {
      if (this.lines.remove(tenant, waiter)) settle(this.refuse(tenant, 'waited-too-long'));
    }, this.options.maxWaitMs);
    timer.unref();
    const waiter: Waiter = {
      grant: (release) => {
        clearTimeout(timer);
        settle(release);
      },
    };
    this.lines.push(tenant, waiter);
    // Others may be at their limit while this tenant is not: it may still go now.
    this.dispatch();
    return {
      outcome,
      cancel: () => {
        clearTimeout(timer);
        this.lines.remove(tenant, waiter);
      },
    };
  }

  /** Whether a request of `group` (groupOf a tenant) may start now. */
  private mayStart(tenant: Tenant, now: number): boolean {
    if (!this.turnTaking) return true;
    return (
      (this.running.get(tenant) ?? 0) < this.options.busyConcurrency &&
      (this.readyAt.get(tenant) ?? 0) <= now
    );
  }

  private activeTenants(): number {
    this.prune(this.now());
    return this.lastSeen.size;
  }

  /** Forgets tenants quiet for ACTIVE_MS (at most every ACTIVE_MS / 4), so the map stays small. */
  private prune(now: number): void {
    if (now - this.lastPrune >= ACTIVE_MS / 4) {
      this.lastPrune = now;
      // Oldest first (each arrival moves its tenant to the end): stop at the first recent one.
      for (const [tenant, seen] of this.lastSeen) {
        if (now - seen < ACTIVE_MS) break;
        this.lastSeen.delete(tenant);
        this.readyAt.delete(tenant);
      }
    }
  }

  private take(tenant: Tenant): Release {
    this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
    const started = this.now();
    this.charge(tenant, 1, started);
    let released = false;
    return (bytesWritten = 0) => {
      if (released) return;
      released = true;
      if (bytesWritten > 0) this.charge(tenant, bytesWritten / BYTES_PER_UNIT, this.now());
      this.rest(tenant, started);
      const left = (this.running.get(tenant) ?? 1) - 1;
      if (left > 0) this.running.set(tenant, left);
      else this.running.delete(tenant);
      this.dispatch();
    };
  }

  /** Counts work in the current window (two windows of ACTIVE_MS are kept). */
  private charge(tenant: Tenant, units: number, now: number): void {
    if (now - this.windowStart >= ACTIVE_MS) {
      const skipped = now - this.windowStart >= 2 * ACTIVE_MS;
      this.usedBefore = skipped ? new Map() : this.usedNow;
      this.usedBeforeTotal = skipped ? 0 : this.usedTotal - this.usedBeforeTotal;
      this.usedNow = new Map();
      this.usedTotal = this.usedBeforeTotal;
      this.windowStart = now;
    }
    this.usedNow.set(tenant, (this.usedNow.get(tenant) ?? 0) + units);
    this.usedTotal += units;
  }

  /**
   * While tenants take turns, a tenant that used more than one and a half times its share of the
   * recent work (1/N of it, N tenants active) rests after each request: REST_FACTOR times as long
   * as the request took, once per other active tenant, at most MAX_REST_MS. Tenants asking alike
   * never rest, so many accounts sharing a busy copy evenly lose nothing; a flood leaves room for
   * the others, and the heavier its requests, the longer. Active, not only running: a client that pauses between
   * requests is still there, and if the flood filled every pause, each of that client's requests
   * would start next to one of its.
   */
  private rest(tenant: Tenant, started: number): void {
    if (!this.turnTaking) {
      this.readyAt.delete(tenant);
      return;
    }
    const active = this.activeTenants();
    const mine = (this.usedNow.get(tenant) ?? 0) + (this.usedBefore.get(tenant) ?? 0);
    if (2 * mine * active <= 3 * this.usedTotal) return;
    const now = this.now();
    const from = Math.max(now, this.readyAt.get(tenant) ?? 0);
    this.readyAt.set(
      tenant,
      Math.min(from + (now - started) * (active - 1) * REST_FACTOR, now + MAX_REST_MS),
    );
  }

  /** Fills free places from the lines, one request per tenant in turn. */
  private dispatch(): void {
    let earliest = Number.POSITIVE_INFINITY;
    this.lines.serve(
      (tenant) => this.mayStart(groupOf(tenant), this.now()),
      (tenant, waiter) => waiter.grant(this.take(groupOf(tenant))),
      undefined,
      // A resting tenant keeps its place: wake up when the first of them may start.
      (tenant) => {
        const ready = this.readyAt.get(groupOf(tenant)) ?? 0;
        if (ready > this.now()) earliest = Math.min(earliest, ready);
      },
    );
    if (earliest !== Number.POSITIVE_INFINITY) this.wakeUpAt(earliest);
  }

  /** One timer, for the earliest moment a resting tenant with a line may start. */
  private wakeUpAt(at: number): void {
    if (this.wakeTimer && this.wakeAt <= at) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.wakeAt = Number.POSITIVE_INFINITY;
        this.dispatch();
      },
      Math.max(0, at - this.now()),
    );
    this.wakeTimer.unref();
  }

  private refuse(tenant: Tenant, refused: Refusal['refused']): Refusal {
    const refusal = { refused, retryAfterSeconds: RETRY_AFTER_SECONDS };
    this.options.onRefused?.(tenantKind(tenant), refusal);
    return refusal;
  }
}

const noop: Release = () => undefined;

export const isRefusal = (value: Release | Waiting | Refusal): value is Refusal =>
  typeof value === 'object' && 'refused' in value;

/** What a waiting request can be abandoned through: its HTTP response. */
export interface Connection {
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
  readonly destroyed: boolean;
}

/**
 * Acts on what `admit` answered: `run` once the request may go (at once, or after its wait),
 * `refuse` when it is refused. A waiting request whose connection closes leaves its line, and a
 * place granted to a connection already gone is handed back at once.
 */
export function whenAdmitted(
  outcome: Release | Waiting | Refusal,
  connection: Connection,
  run: (release: Release) => void,
  refuse: (refusal: Refusal) => void,
): void {
  if (typeof outcome === 'function') {
    run(outcome);
    return;
  }
  if (isRefusal(outcome)) {
    refuse(outcome);
    return;
  }
  const leave = (): void => outcome.cancel();
  connection.once('close', leave);
  void outcome.outcome.then((granted) => {
    connection.off('close', leave);
    if (connection.destroyed) {
      if (typeof granted === 'function') granted();
    } else if (typeof granted === 'function') run(granted);
    else refuse(granted);
  });
}

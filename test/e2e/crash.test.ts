/**
 * A copy that crashes (kill -9) under load, behind the documented haproxy recipe
 * (docs/recipes/haproxy.cfg): its requests in flight are retried on the other copy (`retry-on
 * all-retryable-errors`, `option redispatch`), so clients see no failed request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBothCopies, twoCopiesBehindHaproxy, type TwoCopies } from '../fixtures/fleet-load.js';
import { until } from '../../support/wait.js';

const CLIENTS = 8;

let fleet: TwoCopies;

beforeAll(async () => {
  fleet = await twoCopiesBehindHaproxy();
}, 30_000);

afterAll(() => fleet?.close());

describe('a copy killed with SIGKILL behind the haproxy recipe, under load', () => {
  it('fails no request: the balancer retries them on the other copy', async () => {
    const load = await loadBothCopies(fleet, CLIENTS);
    const { tally } = load;

    fleet.leaving.child.kill('SIGKILL');
    const servedAtCrash = tally.ok;
    // Long enough for the fleet.balancer to notice and for the survivor to carry everything.
    await until(() => tally.ok > servedAtCrash + 200, 30_000);
    await load.stop();

    expect(tally.failures, fleet.balancer.output()).toEqual([]);
  }, 90_000);
});

/**
 * Variables that look meant for the gateway but are not among the names it reads: a typo
 * (`UPSTREM_URL`, `REDIS_ULR`) would otherwise be ignored without a word and the default used,
 * which for UPSTREAM_URL is the demo simulator. One line per such variable, with the closest
 * known name ("did you mean X?"); a former setting (or a near miss of one), with the value it
 * is now fixed at, since setting it would change nothing.
 *
 * A name counts as meant for the gateway when it starts with one of the gateway's prefixes, or
 * when it is one or two edits from a known name or a former one. Names a container platform sets for other
 * services (Kubernetes' service links, e.g. REDIS_PORT, GATEWAY_SERVICE_HOST) are left alone.
 */

/**
 * Prefixes of the gateway's own variables: any other name starting with one is a mistake.
 * Deliberately not NODE_ (Node's own), OTEL_ (the OpenTelemetry SDK's), or single words such as
 * PORT_ or HOST_ that unrelated tools use; nor those of former settings only (ADMISSION_,
 * CREDENTIALS_, HEAP_): those are refused by name. docs/configuration.md lists them.
 */
export const GATEWAY_PREFIXES = [
  'CACHE_',
  'CORS_',
  'GATEWAY_',
  'KEEP_ALIVE_',
  'LIVE_',
  'LOG_',
  'MAX_',
  'METRICS_',
  'PERSISTED_',
  'REDIS_',
  'SHUTDOWN_',
  'SIMULATOR_',
  'UPSTREAM_',
  'WS_',
] as const;

/**
 * The variables Kubernetes (and Docker links before it) set for every service in the namespace:
 * `<SERVICE>_SERVICE_HOST`, `<SERVICE>_SERVICE_PORT[_<NAME>]`, `<SERVICE>_PORT_<n>_<PROTO>[_ADDR|_PORT|_PROTO]`,
 * and `<SERVICE>_PORT=tcp://…`, told from a misspelt `…_PORT` of ours by its value. A service
 * named `redis` or `gateway` must not stop the gateway from starting.
 */
const SERVICE_LINK =
  /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT_\d+_(TCP|UDP|SCTP)(_(ADDR|PORT|PROTO))?)$/;
const SERVICE_LINK_PORT = /_PORT$/;
const SERVICE_LINK_ADDRESS = /^(tcp|udp|sctp):\/\//;

function isServiceLink(name: string, value: string | undefined): boolean {
  if (SERVICE_LINK.test(name)) return true;
  return SERVICE_LINK_PORT.test(name) && SERVICE_LINK_ADDRESS.test(value ?? '');
}

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * neighbours each cost 1 (`REDIS_ULR` is one from `REDIS_URL`). Written here because the one
 * already at hand (graphql-js's `suggestionList`) returns names, not distances, and its
 * tolerance (40% of the length) would take HOSTNAME for a typo of HOST.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i += 1) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j += 1) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const above = rows[i - 1]!;
      let best = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      row.push(best);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/** How far a name may be from a known one and still be taken for a typo of it. */
function tolerance(known: string): number {
  return known.length < 8 ? 1 : 2;
}

function closest(name: string, known: readonly string[]): { name: string; distance: number } {
  let best = { name: '', distance: Number.POSITIVE_INFINITY };
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < best.distance) best = { name: candidate, distance };
  }
  return best;
}

/** Where a former setting's refusal sends the reader. */
export const FIXED_VALUES_DOC = 'docs/configuration.md#fixed-values';

/**
 * One problem line per variable of `env` that looks meant for the gateway but is not `known`;
 * `retired`: former settings -> the value each is fixed at, said in its line.
 */
export function unknownVariables(
  env: Readonly<Record<string, string | undefined>>,
  known: readonly string[],
  retired: Readonly<Record<string, string>> = {},
): string[] {
  const knownSet = new Set(known);
  const retiredNames = Object.keys(retired);
  const problems: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name)) continue;
    const fixedAt = Object.hasOwn(retired, name) ? retired[name] : undefined;
    if (fixedAt !== undefined) {
      problems.push(
        `${name} is no longer a setting: it is fixed at ${fixedAt} (${FIXED_VALUES_DOC})`,
      );
      continue;
    }
    const upper = name.toUpperCase();
    if (name !== upper) {
      // Lower-case names are other programs' (npm_config_*); only an exact miscasing is ours.
      if (knownSet.has(upper))
        problems.push(`${name} is not read (names are upper case): did you mean ${upper}?`);
      continue;
    }
    if (isServiceLink(name, env[name])) continue;
    const prefix = GATEWAY_PREFIXES.find((p) => name.startsWith(p));
    const near = closest(name, known);
    const typo = near.distance <= tolerance(near.name);
    const former = closest(name, retiredNames);
    if (former.distance < near.distance && former.distance <= tolerance(former.name)) {
      problems.push(
        `${name} is not a setting of the gateway, nor is ${former.name} any longer: it is fixed at ${retired[former.name]} (${FIXED_VALUES_DOC})`,
      );
    } else if (typo) {
      problems.push(`${name} is not a setting of the gateway: did you mean ${near.name}?`);
    } else if (prefix) {
      const same = known.filter((k) => k.startsWith(prefix));
      const hint =
        near.distance <= 4
          ? `did you mean ${near.name}?`
          : `known ${prefix} settings: ${same.join(', ')}`;
      problems.push(`${name} is not a setting of the gateway (it starts with ${prefix}): ${hint}`);
    }
  }
  return problems;
}

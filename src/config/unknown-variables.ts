/**
 * Variables that look meant for the gateway but are not read (docs/configuration.md "Mistakes
 * refused at start"): a typo would otherwise be ignored, for UPSTREM_URL the demo simulator used.
 */

/**
 * Prefixes of the gateway's own variables. Not NODE_, OTEL_ (others'), PORT_ or HOST_ (common),
 * nor those of former settings only (refused by name). docs/configuration.md lists them.
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
 * What Kubernetes (and Docker links) set for every service in the namespace: `_SERVICE_HOST`,
 * `_SERVICE_PORT[_<NAME>]`, `_PORT_<n>_<PROTO>[_ADDR|_PORT|_PROTO]`, and `_PORT=tcp://…` (told
 * from a misspelt `…_PORT` of ours by its value). A service named `redis` must not stop start-up.
 */
const SERVICE_LINK =
  /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT_\d+_(TCP|UDP|SCTP)(_(ADDR|PORT|PROTO))?)$/;

function isServiceLink(name: string, value: string | undefined): boolean {
  return (
    SERVICE_LINK.test(name) || (/_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value ?? ''))
  );
}

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and neighbour swaps
 * cost 1. Not graphql-js's `suggestionList`: it gives no distances and takes HOSTNAME for HOST.
 */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i += 1) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const above = rows[i - 1]!;
      let best = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      row.push(best);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/** The nearest of `known`; `typo`: near enough to be taken for a typo of it. */
function closest(name: string, known: readonly string[]) {
  let best = { name: '', distance: Number.POSITIVE_INFINITY };
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < best.distance) best = { name: candidate, distance };
  }
  return { ...best, typo: best.distance <= (best.name.length < 8 ? 1 : 2) };
}

/** Where a former setting's refusal sends the reader. */
const FIXED_VALUES_DOC = 'docs/configuration.md#fixed-values';

/**
 * One problem line per variable of `env` that looks meant for the gateway but is not `known`;
 * `retired`: former settings -> the value each is fixed at, said in its line.
 */
export function unknownVariables(
  env: Readonly<Record<string, string | undefined>>,
  known: readonly string[],
  retired: Readonly<Record<string, string>>,
): string[] {
  const knownSet = new Set(known);
  const retiredNames = Object.keys(retired);
  const problems: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name)) continue;
    if (Object.hasOwn(retired, name)) {
      problems.push(
        `${name} is no longer a setting: it is fixed at ${retired[name]} (${FIXED_VALUES_DOC})`,
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
    const former = closest(name, retiredNames);
    if (former.distance < near.distance && former.typo) {
      problems.push(
        `${name} is not a setting of the gateway, nor is ${former.name} any longer: it is fixed at ${retired[former.name]} (${FIXED_VALUES_DOC})`,
      );
    } else if (near.typo) {
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

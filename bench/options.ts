/**
 * Bench and soak settings: `--name=value` flags, else `BENCH_NAME` environment variables, else
 * the defaults. (`--rounds=5` and `BENCH_ROUNDS=5` mean the same.)
 */
export function setting(name: string, fallback: string): string {
  const flag = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  if (flag !== undefined) return flag.slice(name.length + 3);
  const env = process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
  return env !== undefined && env !== '' ? env : fallback;
}

export function numberSetting(name: string, fallback: number, min = 0): number {
  const raw = setting(name, String(fallback));
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new Error(`--${name} must be a number of at least ${min} (got "${raw}")`);
  }
  return value;
}

export function listSetting(name: string, fallback: string): string[] {
  return setting(name, fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function flag(name: string): boolean {
  return process.argv.includes(`--${name}`) || setting(name, '') === '1';
}

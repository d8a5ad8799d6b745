/**
 * The gateway's version, from the nearest package.json above this module (the sources run from
 * src/observability/, the build from dist/).
 */
import { readFileSync } from 'node:fs';

const PACKAGE_NAME = 'sms-graphql-gateway';

let version: string | undefined;

export function gatewayVersion(): string {
  return (version ??= findVersion());
}

function findVersion(): string {
  for (const up of ['../package.json', '../../package.json', '../../../package.json']) {
    try {
      const file = readFileSync(new URL(up, import.meta.url), 'utf8');
      const parsed = JSON.parse(file) as { name?: unknown; version?: unknown };
      if (parsed.name === PACKAGE_NAME && typeof parsed.version === 'string') return parsed.version;
    } catch {
      // Not here: look one folder higher.
    }
  }
  return 'unknown';
}

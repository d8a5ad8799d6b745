/** The version sms_instance_info and the spans report: package.json's, read from the sources too. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gatewayVersion } from '../../src/observability/version.js';

const packageJson = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { name: string; version: string };

describe('gatewayVersion', () => {
  it("is the gateway's package.json version, the same on every call", () => {
    expect(packageJson.name).toBe('sms-graphql-gateway');
    expect(gatewayVersion()).toBe(packageJson.version);
    expect(gatewayVersion()).toBe(gatewayVersion());
  });
});

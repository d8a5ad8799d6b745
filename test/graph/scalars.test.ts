/** The DateTime scalar: graphql-scalars' own, written out as its text and naming its specification. */
import { isScalarType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graph/schema.js';
import { printGatewaySchema } from '../../src/graph/print.js';

describe('DateTime', () => {
  it('names the specification of DateTime (@specifiedBy), in introspection and schema.graphql', () => {
    const dateTime = schema.getType('DateTime');
    const url = 'https://scalars.graphql.org/andimarek/date-time';
    expect(isScalarType(dateTime) && dateTime.specifiedByURL).toBe(url);
    expect(printGatewaySchema()).toContain(`scalar DateTime\n  @specifiedBy(url: "${url}")`);
  });

  it('serialises DateTime as its RFC 3339 text, not a Date for JSON.stringify to call out for', () => {
    const dateTime = schema.getType('DateTime');
    if (!isScalarType(dateTime)) throw new Error('DateTime is not a scalar');
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    // The same text JSON.stringify wrote for the Date, now already a string in the result.
    expect(dateTime.serialize(at)).toBe(JSON.parse(JSON.stringify(at)));
    expect(dateTime.serialize('2026-01-02T03:04:05Z')).toBe('2026-01-02T03:04:05.000Z');
    expect(() => dateTime.serialize(new Date(Number.NaN))).toThrow(/invalid Date/);
  });
});

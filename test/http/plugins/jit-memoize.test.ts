/**
 * Once src/http/plugins/jit-memoize.ts is loaded, lodash.memoize (graphql-jit's memoizer) keeps
 * its entries in WeakMaps: one per key object, gone with it, and no primitive key is kept at all.
 */
import lodashMemoize from 'lodash.memoize';
import { describe, expect, it } from 'vitest';
import '../../../src/http/plugins/jit-memoize.js';

/** lodash.memoize as graphql-jit calls it (src/http/plugins/lodash.memoize.d.ts types only Cache). */
const memoize = lodashMemoize as typeof lodashMemoize &
  (<A, R>(fn: (arg: A) => R) => ((arg: A) => R) & { readonly cache: unknown });

describe('jit-memoize', () => {
  it('gives every memoized function a WeakMap cache', () => {
    expect(memoize.Cache).toBe(WeakMap);
    const memoized = memoize((node: { readonly name: string }) => ({ of: node.name }));
    expect(memoized.cache).toBeInstanceOf(WeakMap);
  });

  it('still memoizes per key object', () => {
    let calls = 0;
    const compile = memoize((node: { readonly name: string }) => {
      calls += 1;
      return `compiled ${node.name}`;
    });
    const a = { name: 'a' };
    const b = { name: 'a' };
    expect(compile(a)).toBe('compiled a');
    expect(compile(a)).toBe('compiled a');
    expect(calls).toBe(1);
    // An equal object is another key: entries belong to the document objects they came from.
    expect(compile(b)).toBe('compiled a');
    expect(calls).toBe(2);
  });

  it('refuses a key that is not an object, which a WeakMap cannot hold', () => {
    const byText = memoize((text: string) => text.length);
    expect(() => byText('a string key')).toThrow(TypeError);
  });
});

/** The part of lodash.memoize that src/http/plugins/jit-memoize.ts sets (the package ships no types). */
declare module 'lodash.memoize' {
  const memoize: { Cache: new () => unknown };
  export default memoize;
}

/**
 * graphql-jit memoizes its compile-time helpers with lodash.memoize in module-level Maps keyed by
 * objects of each compiled document, never emptied (about 220 kB per alias-heavy document). With
 * WeakMaps those entries go with their document; every key graphql-jit memoizes on is an object.
 * Imported before graphql-jit (src/http/plugins/jit.ts), which creates its caches when it loads.
 */
import memoize from 'lodash.memoize';

memoize.Cache = WeakMap;

/**
 * graphql-jit memoizes with lodash.memoize in module-level Maps keyed by each document's objects,
 * never emptied (220 kB per alias-heavy document); WeakMaps let them go with their document.
 * Imported before graphql-jit, which creates its caches when it loads.
 */
import memoize from 'lodash.memoize';

memoize.Cache = WeakMap;

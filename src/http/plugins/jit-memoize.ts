/**
 * graphql-jit memoizes in module-level Maps, never emptied (220 kB per alias-heavy document):
 * WeakMaps let entries go with their document. Imported first: graphql-jit makes them on load.
 */
import memoize from 'lodash.memoize';

memoize.Cache = WeakMap;

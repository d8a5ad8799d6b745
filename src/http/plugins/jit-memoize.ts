/**
 * graphql-jit memoizes its compile-time helpers with lodash.memoize, in module-level Maps keyed
 * by objects of each compiled document (AST nodes, path arrays) and never emptied: about 220 kB
 * per alias-heavy document compiled, kept for the life of the process, so distinct documents
 * grew the heap without bound. lodash lets the cache class be replaced; with WeakMaps those
 * entries go when their document does. Every key graphql-jit memoizes on is an object. Imported
 * before graphql-jit (src/http/plugins/jit.ts), which creates its caches when it loads.
 */
import memoize from 'lodash.memoize';

memoize.Cache = WeakMap;

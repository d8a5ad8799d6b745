/** Where GraphQL is served (and the WebSocket endpoint): one home for the path every part uses. */
export const GRAPHQL_PATH = '/graphql';

/** Probes and scrapes answered whatever the load: never admitted, logged at debug. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/health', '/readiness', '/metrics']);

/** Where a number's doorbell rings (src/http/doorbell-route.ts): `${RING_PATH}/<tid>/<signature>`. */
export const RING_PATH = '/hooks/ring';

/** Where GraphQL is served (and the WebSocket endpoint): one home for the path every part uses. */
export const GRAPHQL_PATH = '/graphql';

/** Builds the schema once, from the type files imported here. */
import { builder } from './builder.js';
import { printServiceSdlOnDemand } from './service-sdl.js';
import { boundListLookups } from './list-lookups.js';
import { chargeListFields } from './response-budget.js';
import './scalars.js';
import './numbers.js';

import './message.js';
import './history.js';
import './message-connection.js';
import './live.js';
import { syncGlobalIds } from './nodes.js';

export const FEDERATION_LINK = 'https://specs.apollo.dev/federation/v2.9';

export const schema = builder.toSubGraphSchema({
  linkUrl: FEDERATION_LINK,
  // @listSize: the list sizes routers read for demand control (cost.ts).
  federationDirectives: ['@key', '@shareable', '@tag', '@listSize'],
});

// `_service { sdl }` prints on the first router request, not at every start (service-sdl.ts).
printServiceSdlOnDemand(schema);
// nodes(ids:) and _entities cost per id and are capped (FIXED_MAX_NODE_IDS).
boundListLookups(schema);
// Node ids without a promise each (nodes.ts).
syncGlobalIds(schema);
// Every list an answer holds is charged to the request's MAX_RESPONSE_BYTES as it is built.
chargeListFields(schema);

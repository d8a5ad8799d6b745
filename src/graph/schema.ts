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

export const schema = builder.toSubGraphSchema({
  linkUrl: 'https://specs.apollo.dev/federation/v2.9',
  // @listSize: the list sizes routers read for demand control (cost.ts).
  federationDirectives: ['@key', '@shareable', '@tag', '@listSize'],
});

printServiceSdlOnDemand(schema);
boundListLookups(schema);
syncGlobalIds(schema);
chargeListFields(schema);

// The federation protocol's fields head Query in GraphiQL's explorer: say whom they are for.
const { _entities, _service } = schema.getQueryType()?.getFields() ?? {};
if (_entities)
  _entities.description =
    'For a federation router: the Message (by id) and Number (by tid or number) entities named by `representations`. From a frontend, use `nodes`, `number` or `ownedNumbers`.';
if (_service)
  _service.description =
    "For a federation router: this subgraph's schema (`sdl`), to compose a supergraph. A frontend has no use for it.";

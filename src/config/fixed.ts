/**
 * Former settings no operator needs to tune. Each doc comment, why it has its value, is its row in
 * docs/configuration.md "Fixed values". loadConfig fills Config from them (tests may still set
 * those fields); a former variable set in the environment stops start-up (RETIRED_VARIABLES).
 */
import type { HistoryEndReading } from './settings.js';

/** one attempt may use all of `UPSTREAM_TIMEOUT_MS` (100%): a shorter one would cut off slow answers */
export const FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT = 100;
/** three attempts ride out a reset or a 502/503 of a restart; more only load a failing service */
export const FIXED_UPSTREAM_RETRIES = 2;
/** first retry after 50 ms, later ones longer (jittered, at most 2 s): small next to a deadline */
export const FIXED_UPSTREAM_RETRY_BASE_MS = 50;
/** the pause after a 429 without a usable `Retry-After`; a service wanting another says so in one */
export const FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS = 5_000;
/** more than one call's three attempts, so one unlucky call never opens a breaker */
export const FIXED_UPSTREAM_BREAKER_THRESHOLD = 5;
/** a probe every 3 s: a healed service is back within seconds, a down one gets a call per 3 s */
export const FIXED_UPSTREAM_BREAKER_COOLDOWN_MS = 3_000;
/** half the adaptive limit per account while others wait: none starves the rest (alone: more) */
export const FIXED_UPSTREAM_ACCOUNT_SHARE_PERCENT = 50;
/** every answered call renews an acceptance and a refusal ends it: the length hardly matters */
export const FIXED_CREDENTIALS_VERIFIED_TTL_MS = 300_000;
/** a flood of invented credentials costs the service one call per pair a minute at most */
export const FIXED_CREDENTIALS_REFUSED_TTL_MS = 60_000;
/** the fewest requests running while the copy is busy: seats follow the loop above it */
export const FIXED_ADMISSION_MIN_SEATS = 2;
/** far more waiting requests than a real client keeps in flight; past them, 429 at once */
export const FIXED_ADMISSION_MAX_WAITING = 100;
/** a client whose turn has not come within 5 s is better told 429 than kept hanging */
export const FIXED_ADMISSION_MAX_WAIT_MS = 5_000;
/** measured: V8's own pacing let request bodies' garbage pile up ([performance](performance.md#memory-under-large-requests)) */
export const FIXED_HEAP_GROWING_PERCENT = 50;
/** 1 MiB: a larger answer would take the room of many small ones, in memory or in Redis */
export const FIXED_CACHE_MAX_ENTRY_BYTES = 1024 * 1024;
/** a screen needs one subscription (several `tids` in it); 20 leaves room and bounds one socket */
export const FIXED_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION = 20;
/** parsing stops at 2000 tokens, so a huge document costs little; real operations use far fewer */
export const FIXED_MAX_TOKENS = 2_000;
/** real operations use a few `@include`/`@skip`; 20 bounds the validation of crafted documents */
export const FIXED_MAX_DIRECTIVES = 20;
/** a 200-number fan-out with room to spare; `MAX_QUERY_COST` bounds the rest */
export const FIXED_MAX_UPSTREAM_CALLS = 250; // 200: ASSUMED_NUMBERS_PER_ACCOUNT
/** a page's worth of ids, as routers assume; each id also counts in `MAX_QUERY_COST` */
export const FIXED_MAX_NODE_IDS = 100; // MAX_PAGE_SIZE, ASSUMED_NODE_IDS
/** the demo simulator reads `history_end` as the gateway assumes by default */
export const FIXED_SIMULATOR_HISTORY_END: HistoryEndReading = 'exclusive'; // tests pass an option

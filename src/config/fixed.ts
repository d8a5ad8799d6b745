/**
 * Fixed values: former settings no operator needs to tune, each with why it has its value
 * (docs/configuration.md "Fixed values" lists them). loadConfig fills Config's fields from them,
 * so tests and embedders can still set those fields; the environment cannot, and a former
 * variable set there stops start-up with the value it is fixed at (RETIRED_VARIABLES in
 * settings.ts).
 */
import type { HistoryEndReading } from './settings.js';

/** One attempt may use all of UPSTREAM_TIMEOUT_MS: a shorter one would cut off slow answers. */
export const FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT = 100;
/** Three attempts ride out a reset or a 502/503 of a restart; more only load a failing service. */
export const FIXED_UPSTREAM_RETRIES = 2;
/** First retry after 50 ms, later ones longer (jittered, at most 2 s): small next to a deadline. */
export const FIXED_UPSTREAM_RETRY_BASE_MS = 50;
/** The pause after a 429 without a usable Retry-After; a service wanting another says so in one. */
export const FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS = 5_000;
/** More than one call's three attempts, so one unlucky call never opens a breaker. */
export const FIXED_UPSTREAM_BREAKER_THRESHOLD = 5;
/** A probe every 3 s: a healed service is back within seconds, a down one gets a call per 3 s. */
export const FIXED_UPSTREAM_BREAKER_COOLDOWN_MS = 3_000;
/** Half the adaptive limit per account while others wait: none starves the rest (alone: more). */
export const FIXED_UPSTREAM_ACCOUNT_SHARE_PERCENT = 50;
/** Every answered call renews an acceptance and a refusal ends it: the length hardly matters. */
export const FIXED_CREDENTIALS_VERIFIED_TTL_MS = 300_000;
/** 1 min: a flood of invented credentials costs the service one call per pair a minute at most. */
export const FIXED_CREDENTIALS_REFUSED_TTL_MS = 60_000;
/** The fewest requests running while the copy is busy: seats follow the loop above it. */
export const FIXED_ADMISSION_MIN_SEATS = 2;
/** Far more waiting requests than a real client keeps in flight; past them, 429 at once. */
export const FIXED_ADMISSION_MAX_WAITING = 100;
/** A client whose turn has not come within 5 s is better told 429 than kept hanging. */
export const FIXED_ADMISSION_MAX_WAIT_MS = 5_000;
/** Measured in the APQ flood: V8's own pacing let request bodies' garbage pile up (limits.md). */
export const FIXED_HEAP_GROWING_PERCENT = 50;
/** 1 MiB: a larger answer would take the room of many small ones, in memory or in Redis. */
export const FIXED_CACHE_MAX_ENTRY_BYTES = 1024 * 1024;
/** A screen needs one subscription (several tids in it); 20 leaves room and bounds one socket. */
export const FIXED_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION = 20;
/** Parsing stops at 2000 tokens, so a huge document costs little; real operations use far fewer. */
export const FIXED_MAX_TOKENS = 2_000;
/** Real operations use a few @include/@skip; 20 bounds the validation of crafted documents. */
export const FIXED_MAX_DIRECTIVES = 20;
/** A 200-number fan-out (ASSUMED_NUMBERS_PER_ACCOUNT) with room to spare; cost bounds the rest. */
export const FIXED_MAX_UPSTREAM_CALLS = 250;
/** A page's worth of ids (MAX_PAGE_SIZE), as routers assume (ASSUMED_NODE_IDS); each is costed. */
export const FIXED_MAX_NODE_IDS = 100;
/** The demo simulator reads history_end as the gateway assumes by default; tests pass an option. */
export const FIXED_SIMULATOR_HISTORY_END: HistoryEndReading = 'exclusive';

/**
 * CORS: a grant reflects the origin with `Vary: Origin` (credentials are headers, never cookies);
 * a refused preflight gets 403. `Origin: null` only if CORS_ORIGINS lists `null`, even with `*`.
 */
import type { Plugin } from 'graphql-yoga';
import { REQUEST_ID_HEADER } from '../observability/request-id.js';
import { appendVary } from './vary.js';
import { TOKEN_HEADER_KEY } from 'graphql-sse';

/** Pages served from this machine: http(s)://localhost, 127.0.0.0/8 or [::1], any port. */
const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?$/;

// PUT and DELETE, and the stream token: graphql-sse's single connection mode (reserve, stop).
const ALLOWED_METHODS = 'GET, POST, PUT, DELETE';
const ALLOWED_HEADERS =
  'authorization, x-sys-id, x-auth-token, content-type, accept, ' +
  `${REQUEST_ID_HEADER}, ${TOKEN_HEADER_KEY}`;
// Warning: a stale-if-error answer says so (docs/stale-if-error.md); scripts may read it.
const EXPOSED_HEADERS = `${REQUEST_ID_HEADER}, warning`;
const PREFLIGHT_MAX_AGE_S = '600';

export interface CorsSettings {
  /** CORS_ORIGINS: exact origins, `null`, or `*` alone. */
  readonly origins: readonly string[];
  /** Demo mode with no CORS_ORIGINS: pages on loopback may call (a Vite or Next dev server). */
  readonly allowLoopback: boolean;
}

/** Whether a page from `origin` may call. */
export function originAllowed(settings: CorsSettings, origin: string): boolean {
  const { origins } = settings;
  if (origins.includes(origin)) return true;
  if (origin === 'null') return false;
  if (origins.length > 0) return origins.includes('*');
  return settings.allowLoopback && LOOPBACK_ORIGIN.test(origin);
}

/** For the start-up log and the banner: who may call from a browser, and how to allow others. */
export function corsSummary(settings: CorsSettings): string {
  const how = 'set CORS_ORIGINS=https://app.example.com (comma-separated, or * for any)';
  if (settings.origins.includes('*')) {
    return 'Browsers: pages from any origin may call (CORS_ORIGINS=*)';
  }
  if (settings.origins.length > 0) {
    return `Browsers: pages from ${settings.origins.join(', ')} may call; others are refused (CORS_ORIGINS)`;
  }
  if (settings.allowLoopback) {
    return `Browsers: pages on localhost may call (demo mode); for others ${how}`;
  }
  return `Browsers: every page will be refused (no CORS_ORIGINS); to allow yours, ${how}`;
}

/** True when no browser page at all may call (the start-up log warns). */
export function corsRefusesAll(settings: CorsSettings): boolean {
  return settings.origins.length === 0 && !settings.allowLoopback;
}

/** The refusal a preflight from a page that may not call gets. */
export function refusalMessage(origin: string): string {
  return (
    `CORS: pages from ${origin} may not call this gateway. ` +
    `Its operator can allow them with CORS_ORIGINS=${origin} (comma-separated list of origins).`
  );
}

/** CORS as a yoga plugin (the gateway turns yoga's own off: it would answer 204 or 405). */
export function useCors(settings: CorsSettings): Plugin {
  // With nothing configured no browser is allowed, but a preflight still gets the refusal.
  const dependsOnOrigin = settings.origins.length > 0 || settings.allowLoopback;
  return {
    onRequest({ request, fetchAPI, endResponse }) {
      const origin = request.headers.get('origin');
      const preflight =
        request.method === 'OPTIONS' && request.headers.has('access-control-request-method');
      if (origin === null || !preflight) return;
      if (!originAllowed(settings, origin)) {
        endResponse(
          fetchAPI.Response.json(
            { errors: [{ message: refusalMessage(origin) }] },
            { status: 403, headers: { vary: 'Origin' } },
          ),
        );
        return;
      }
      endResponse(
        new fetchAPI.Response(null, {
          status: 204,
          headers: {
            'content-length': '0',
            vary: 'Origin',
            'access-control-allow-origin': origin,
            'access-control-allow-methods': ALLOWED_METHODS,
            'access-control-allow-headers': ALLOWED_HEADERS,
            'access-control-max-age': PREFLIGHT_MAX_AGE_S,
          },
        }),
      );
    },
    onResponse({ request, response }) {
      if (request.method === 'OPTIONS') return;
      if (dependsOnOrigin) appendVary(response.headers, 'Origin');
      const origin = request.headers.get('origin');
      if (origin === null || !originAllowed(settings, origin)) return;
      response.headers.set('access-control-allow-origin', origin);
      response.headers.set('access-control-expose-headers', EXPOSED_HEADERS);
    },
  };
}

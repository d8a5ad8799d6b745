/** /readiness: 200 while the copy takes new work, 503 once it drains, with detail for people. */
import type { Plugin } from 'graphql-yoga';

export interface ReadinessReport {
  readonly ready: boolean;
  readonly [detail: string]: unknown;
}

export interface ReadinessSources {
  readonly draining: () => boolean;
  readonly instanceId: string;
  /** Demo mode says so wherever an operator looks (docs/configuration.md "Demo mode"). */
  readonly simulator: boolean;
  readonly redis: Readonly<Record<string, { readonly up: boolean }>>;
}

export function readinessReport(sources: ReadinessSources): () => ReadinessReport {
  return () => {
    const uses = Object.entries(sources.redis);
    const ready = !sources.draining();
    return {
      ready,
      status: ready ? 'ready' : 'draining',
      instance: sources.instanceId,
      ...(sources.simulator ? { upstream: 'simulator' } : {}),
      ...(uses.length > 0
        ? { redis: Object.fromEntries(uses.map(([use, c]) => [use, c.up ? 'up' : 'down'])) }
        : {}),
    };
  };
}

/** By hand: yoga's useReadinessCheck runs a URLPattern on every request (1% of a query's CPU). */
export function useReadiness(report: () => ReadinessReport): Plugin {
  return {
    onRequest({ request, endResponse }) {
      if (!request.url.includes('/readiness')) return;
      if (new URL(request.url).pathname !== '/readiness') return;
      const now = report();
      endResponse(
        new Response(JSON.stringify(now), {
          status: now.ready ? 200 : 503,
          headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
        }),
      );
    },
  };
}

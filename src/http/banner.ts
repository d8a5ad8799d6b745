/** What `npm start` prints for a person: where the gateway is and, with the simulator, how to try it. */
import { DEMO_CREDENTIALS } from '../simulator/demo-credentials.js';

function basicAuthorization(sysId: string, authToken: string): string {
  return `Basic ${Buffer.from(`${sysId}:${authToken}`).toString('base64')}`;
}

export const DEMO_AUTHORIZATION = basicAuthorization(
  DEMO_CREDENTIALS.sysId,
  DEMO_CREDENTIALS.authToken,
);

const DEMO_QUERY =
  '{ ownedNumbers { tid number type history(start: 0, end: 3) { totalCount messages { sentAt direction body status { code text } } } } }';

export function banner(
  endpoint: string,
  upstream: { simulatorUrl: string } | { origin: string },
): string {
  const lines = [`SMS GraphQL gateway on ${endpoint} (GraphiQL: open it in a browser)`];
  if ('origin' in upstream) return [...lines, `Upstream: ${upstream.origin}`].join('\n');
  return [
    ...lines,
    `Upstream: built-in simulator at ${upstream.simulatorUrl} (set UPSTREAM_URL to use the real service)`,
    `Demo credentials: sys_id=${DEMO_CREDENTIALS.sysId} auth_token=${DEMO_CREDENTIALS.authToken}`,
    'Browsers: pages on localhost may call it (demo mode); for others set CORS_ORIGINS=https://app.example.com',
    'Try:',
    `  curl -s ${endpoint} -H 'Authorization: ${DEMO_AUTHORIZATION}' -H 'Content-Type: application/json' -d '${JSON.stringify({ query: DEMO_QUERY })}'`,
  ].join('\n');
}

/**
 * GraphiQL in a real browser: Debian's Chromium, headless, opens the running gateway's GraphiQL,
 * finds the default query and the demo credentials pre-filled, runs the query and reads the
 * answer in the result pane. Leaves a screenshot in test-output/graphiql.png.
 *
 * The page and its files (src/http/graphiql.ts) all come from the gateway: any request that
 * would leave the gateway's origin is refused and fails the test, which is how it proves
 * GraphiQL works without internet access.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page, Route } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../fixtures/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';

const SCREENSHOT = new URL('../../test-output/graphiql.png', import.meta.url);
const DEMO_AUTHORIZATION = `Basic ${btoa(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`)}`;

let gateway: GatewayProcess | undefined;
let browser: Browser | undefined;
/** Requests that would have left the gateway's origin. */
const refused: string[] = [];
const pageErrors: string[] = [];

const NO_CHROMIUM =
  `No Chromium at ${CHROMIUM}: this test drives Debian's chromium package ` +
  '(apt-get install -y chromium; .ci/run installs it when missing).';

beforeAll(async () => {
  // Without a browser the test below fails with NO_CHROMIUM; it is never skipped.
  if (!existsSync(CHROMIUM)) return;
  gateway = await startGatewayProcess();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
});

async function gatewayOnly(route: Route, gatewayOrigin: string): Promise<void> {
  const url = new URL(route.request().url());
  if (url.origin === gatewayOrigin || url.protocol === 'data:' || url.protocol === 'blob:')
    return route.continue();
  refused.push(url.href);
  return route.abort('internetdisconnected');
}

const QUERY_EDITOR = 'section[aria-label="Operation Editor"] .view-lines';
// The Variables and Headers editors share this section; the hidden one is Variables.
const HEADERS_EDITOR = 'section[aria-label="Headers"] .graphiql-editor:not(.hidden) .view-lines';
const RESULT_PANE = 'section[aria-label="Result Window"] .view-lines';

function withoutSpace(text: string): string {
  return text.replace(/\s+/g, '');
}

/** The text a Monaco editor shows (its rendered lines; Monaco renders spaces as U+00A0). */
async function editorText(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).innerText()).replaceAll('\u00a0', ' ');
}

describe('GraphiQL in headless Chromium', () => {
  it('runs the default query with the demo credentials and shows the answer', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(NO_CHROMIUM);
    if (!browser || !gateway) throw new Error('set-up failed');
    const { endpoint } = gateway;
    const page = await browser.newPage({ viewport: { width: 1440, height: 1200 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.route('**/*', (route) => gatewayOnly(route, new URL(endpoint).origin));

    await page.goto(endpoint);
    const execute = page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' });
    await execute.waitFor({ timeout: 30_000 });

    await expect
      .poll(() => editorText(page, QUERY_EDITOR))
      .toContain('query NumbersWithLatestMessages {');
    await expect
      .poll(() => editorText(page, HEADERS_EDITOR))
      .toContain(`"Authorization": "${DEMO_AUTHORIZATION}"`);

    const answered = page.waitForResponse(
      (response) =>
        response.url() === endpoint &&
        response.request().method() === 'POST' &&
        (response.request().postData() ?? '').includes('NumbersWithLatestMessages'),
    );
    await execute.click();
    const response = await answered;

    // What GraphiQL sent and what the gateway answered.
    expect(response.request().headers().authorization).toBe(DEMO_AUTHORIZATION);
    expect(response.status()).toBe(200);
    const body = (await response.json()) as {
      data?: {
        ownedNumbers: {
          tid: string;
          history: { totalCount: number; messages: { body: string }[] } | null;
        }[];
      };
      errors?: unknown;
    };
    expect(body.errors).toBeUndefined();
    expect(
      body.data?.ownedNumbers.map((n) => ({
        tid: n.tid,
        totalCount: n.history?.totalCount,
        bodies: n.history?.messages.map((m) => m.body),
      })),
    ).toEqual(
      DEMO_ACCOUNT.numbers.map((n) => ({
        tid: n.tid,
        totalCount: n.messages.length,
        bodies: n.messages.slice(0, 5).map((m) => m.body),
      })),
    );

    // What the person sees: the top of the answer in the result pane. The pane wraps long
    // lines, so whitespace is left out of the comparison.
    const first = DEMO_ACCOUNT.numbers[0];
    const newest = first?.messages[0];
    if (!first || !newest) throw new Error('the demo account has no messages');
    await expect.poll(() => editorText(page, RESULT_PANE)).toContain('"ownedNumbers": [');
    const shown = withoutSpace(await editorText(page, RESULT_PANE));
    for (const line of [
      `"tid": "${first.tid}"`,
      `"number": "${first.number}"`,
      `"totalCount": ${first.messages.length}`,
      `"body": ${JSON.stringify(newest.body)}`,
    ]) {
      expect(shown).toContain(withoutSpace(line));
    }
    expect(shown).not.toContain('"errors"');

    await mkdir(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({ path: fileURLToPath(SCREENSHOT) });
    expect(existsSync(SCREENSHOT)).toBe(true);

    expect(refused).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('runs a subscription and shows messages as they arrive', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(NO_CHROMIUM);
    if (!browser) throw new Error('set-up failed');
    // A gateway of its own: messages arrive on the first demo number every 300 ms.
    const live = await startGatewayProcess({ SIMULATOR_ARRIVALS_MS: '300', LIVE_POLL_MS: '200' });
    try {
      const first = DEMO_ACCOUNT.numbers[0];
      if (!first) throw new Error('the demo account has no numbers');
      const query = `subscription OnArrival { messageAdded(tids: ["${first.tid}"]) { tid body } }`;
      const page = await browser.newPage({ viewport: { width: 1440, height: 1200 } });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.route('**/*', (route) => gatewayOnly(route, new URL(live.endpoint).origin));
      await page.goto(`${live.endpoint}?query=${encodeURIComponent(query)}`);
      const execute = page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' });
      await execute.waitFor({ timeout: 30_000 });
      await expect.poll(() => editorText(page, QUERY_EDITOR)).toContain('subscription OnArrival');
      await execute.click();
      // Each event replaces the last in the result pane: two different arrivals prove a stream.
      const seen = new Set<string>();
      await expect
        .poll(
          async () => {
            const match = /Demo arrival (\d+)/.exec(await editorText(page, RESULT_PANE));
            if (match?.[1]) seen.add(match[1]);
            return seen.size;
          },
          { timeout: 15_000, interval: 100 },
        )
        .toBeGreaterThanOrEqual(2);
      expect(withoutSpace(await editorText(page, RESULT_PANE))).toContain(
        withoutSpace(`"tid": "${first.tid}"`),
      );
      expect(refused).toEqual([]);
      expect(pageErrors).toEqual([]);
      await page.close();
    } finally {
      await live.close();
    }
  }, 60_000);
});

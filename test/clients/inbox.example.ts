/**
 * The example app (examples/inbox), built by `npm run test:examples`, served from its own origin
 * and driven in headless Chromium against the gateway on another port (so CORS is real): the
 * numbers, a page of messages, the next page, a live arrival (an edge of the list), one that
 * arrives while the WebSocket is down (delivered once on reconnect, by its resume token), and an
 * error shown as the gateway words it. Leaves a screenshot in test-output/inbox.png. Run by `npm run test:examples`
 * (vitest.examples.config.ts), which .ci/run calls after `npm test`.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page, Route } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../fixtures/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { serveGateway, type ServedGateway } from './served-gateway.js';

const DIST = new URL('../../examples/inbox/dist/', import.meta.url);
const SCREENSHOT = new URL('../../test-output/inbox.png', import.meta.url);
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

let gateway: ServedGateway | undefined;
let app: Server | undefined;
let appOrigin = '';
let browser: Browser | undefined;
const refused: string[] = [];
const pageErrors: string[] = [];

/** The built app, as any static host would serve it. */
async function serveApp(): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://app').pathname;
    const file = new URL(`.${path === '/' ? '/index.html' : path}`, DIST);
    readFile(file).then(
      (body) => {
        res.writeHead(200, { 'content-type': TYPES[extname(path || '.html')] ?? TYPES['.html']! });
        res.end(body);
      },
      () => {
        res.writeHead(404).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return server;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM) || !existsSync(new URL('index.html', DIST))) return;
  // Demo mode's CORS: pages on loopback may call.
  gateway = await serveGateway({ allowLoopbackOrigins: true });
  app = await serveApp();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (app ? app.close(resolve) : resolve(undefined)));
  await gateway?.close();
});

/** Only the app's own origin and the gateway: nothing may leave for the internet. */
function localOnly(route: Route): Promise<void> {
  const url = new URL(route.request().url());
  if (url.origin === appOrigin || url.origin === gateway?.origin) return route.continue();
  refused.push(url.href);
  return route.abort('internetdisconnected');
}

const bodies = (page: Page) => page.locator('li.message .body').allInnerTexts();

describe('examples/inbox in headless Chromium', () => {
  it('shows numbers, pages messages, takes a live arrival and shows an error', async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`No Chromium at ${CHROMIUM} (apt-get install chromium)`);
    if (!existsSync(new URL('index.html', DIST))) {
      throw new Error('examples/inbox is not built: run `npm run test:examples`');
    }
    if (!browser || !gateway) throw new Error('set-up failed');
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.route('**/*', localOnly);
    await page.goto(`${appOrigin}/?gateway=${encodeURIComponent(`${gateway.origin}/graphql`)}`);

    // The numbers of the demo account (signed in with the demo credentials it starts with).
    const numbers = page.locator('#numbers button');
    await expect.poll(() => numbers.count(), { timeout: 15_000 }).toBe(DEMO_ACCOUNT.numbers.length);
    const first = DEMO_ACCOUNT.numbers[0]!;
    const polls = () => gateway!.simulator.calls.filter((c) => c.operation === 'smshistory').length;
    const beforeOpen = polls();
    await numbers.first().click();

    // The first page, newest first, then the next one merged below it.
    await expect.poll(() => bodies(page)).toHaveLength(20);
    expect(await bodies(page)).toEqual(first.messages.slice(0, 20).map((m) => m.body));
    await page.getByRole('button', { name: 'Load older' }).click();
    await expect.poll(() => bodies(page)).toHaveLength(40);
    expect(await bodies(page)).toEqual(first.messages.slice(0, 40).map((m) => m.body));

    // A message arrives after the live loop's first poll (which only learns what is there).
    await expect.poll(polls, { timeout: 5_000 }).toBeGreaterThan(beforeOpen + 2);
    gateway.simulator.deliver(DEMO_CREDENTIALS.sysId, first.tid, 'Hello from the inbox test');
    await expect
      .poll(async () => (await bodies(page))[0], { timeout: 10_000 })
      .toBe('Hello from the inbox test');
    expect(await page.locator('#live').innerText()).toBe('1 new while you were here');
    expect(await bodies(page)).toHaveLength(41);

    // The network drops; a message arrives before graphql-ws reconnects. The subscription
    // resumes with its token: the message lands at the head once, nothing else moves.
    const upgrades = gateway.upgrades();
    gateway.dropWebSockets();
    gateway.simulator.deliver(DEMO_CREDENTIALS.sysId, first.tid, 'Sent while the network was down');
    await expect
      .poll(async () => (await bodies(page))[0], { timeout: 15_000 })
      .toBe('Sent while the network was down');
    expect(gateway.upgrades()).toBeGreaterThan(upgrades);
    await page.waitForTimeout(300);
    expect(await bodies(page)).toEqual([
      'Sent while the network was down',
      'Hello from the inbox test',
      ...first.messages.slice(0, 40).map((m) => m.body),
    ]);
    expect(await page.locator('#live').innerText()).toBe('2 new while you were here');

    await page.evaluate(() => window.scrollTo(0, 0));
    await mkdir(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({ path: fileURLToPath(SCREENSHOT) });

    // Wrong credentials: the error as the gateway words it, code first.
    await page.locator('input[name="authToken"]').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.locator('#error').innerText(), { timeout: 10_000 })
      .toMatch(/^UNAUTHENTICATED: /);
    expect(await numbers.count()).toBe(0);

    expect(refused).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 90_000);
});

// The authorize pages in real Chromium (decisions.md 7): sign in through the HTML form,
// approve on the consent page, land on the app's redirect URI (a loopback server of the
// test's own) with a code, state and iss; in a fresh browser, deny and land with
// access_denied. No Content-Security-Policy violation on the way (the pages load
// nothing and run no script; the form's redirect to the app passes form-action), and
// the pages refuse to be framed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { authorizeQuery, newAccount, PASSWORD, registerApp } from '../oauth/support.js';
import { CHROMIUM } from '../helpers/chromium.js';


function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  return problems;
}

test('sign in, approve: the app gets a code; deny: access_denied; the pages cannot be framed', async () => {
  const srv: TestServer = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' });
  const landed: URL[] = [];
  const appServer = createServer((req, res) => {
    landed.push(new URL(req.url!, 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>App</title><p id="app">back at the app</p>');
  });
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  const appOrigin = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
  let browser: Browser | undefined;
  try {
    const app = await registerApp(srv, ['openid', 'display_name', 'sign'], [`${appOrigin}/cb`]);
    const account = await newAccount(srv);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const state = 'chromium state &=/?#%';

    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(`${srv.url}/oauth/authorize?${authorizeQuery(app, { scope: 'openid display_name sign', state })}`);
    await page.getByLabel('E-mail or username').fill(account.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.match((await page.textContent('body'))!, /See your display name/);
    assert.match((await page.textContent('body'))!, /Create and manage signatures on your behalf/);
    await Promise.all([page.waitForURL(`${appOrigin}/cb?**`), page.getByRole('button', { name: 'Allow' }).click()]);
    const approved = new URL(page.url());
    assert.match(approved.searchParams.get('code')!, /^[A-Za-z0-9_-]{43}$/);
    assert.is(approved.searchParams.get('state'), state);
    assert.is(approved.searchParams.get('iss'), srv.deps.config.baseUrl);
    assert.is(await page.textContent('#app'), 'back at the app');
    const cookies = await context.cookies(srv.url);
    const session = cookies.find((c) => c.name === 'provenant_session')!;
    assert.ok(session.httpOnly, 'session cookie HttpOnly');
    assert.is(session.sameSite, 'Lax');
    assert.equal(problems, [], 'no CSP violation or page error');

    // signed in and granted: straight back to the app with a new code
    await Promise.all([page.waitForURL(`${appOrigin}/cb?**`), page.goto(`${srv.url}/oauth/authorize?${authorizeQuery(app, { scope: 'display_name', state })}`)]);
    assert.ok(new URL(page.url()).searchParams.get('code'));

    // a fresh browser, another user: sign in, deny
    const stranger = await newAccount(srv);
    const other = await browser.newContext();
    const second = await other.newPage();
    const secondProblems = watch(second);
    await second.goto(`${srv.url}/oauth/authorize?${authorizeQuery(app, { scope: 'openid sign', state: 'deny-me' })}`);
    await second.getByLabel('E-mail or username').fill(stranger.email);
    await second.getByLabel('Password').fill(PASSWORD);
    await second.getByRole('button', { name: 'Sign in' }).click();
    await Promise.all([second.waitForURL(`${appOrigin}/cb?**`), second.getByRole('button', { name: 'Deny' }).click()]);
    const denied = new URL(second.url());
    assert.is(denied.searchParams.get('error'), 'access_denied');
    assert.is(denied.searchParams.get('state'), 'deny-me');
    assert.is(denied.searchParams.get('iss'), srv.deps.config.baseUrl);
    assert.is(denied.searchParams.get('code'), null);
    assert.equal(secondProblems, []);

    // framed by the app's origin: Chromium refuses to render the page in the frame (frame-ancestors 'none')
    const framer = await other.newPage();
    await framer.route(`${appOrigin}/frame`, (route) => route.fulfill({ contentType: 'text/html', body: `<iframe id="f" src="${srv.url}/oauth/authorize?${authorizeQuery(app)}"></iframe>` }));
    await framer.goto(`${appOrigin}/frame`);
    await framer.waitForLoadState('load');
    assert.is(framer.frames().length, 2, 'the iframe exists');
    assert.not.ok(framer.frames()[1].url().startsWith(srv.url), `the frame shows Chromium's refusal, not the page (${framer.frames()[1].url()})`);
    let forms = 0;
    for (const frame of framer.frames()) forms += await frame.locator('input[name="password"]').count().catch(() => 0);
    assert.is(forms, 0, 'the sign-in form is not rendered inside the frame');
    assert.ok(landed.length >= 3, 'the app server saw every landing');
  } finally {
    await browser?.close();
    await new Promise((resolve) => appServer.close(resolve));
    await srv.close();
  }
});

test.run();

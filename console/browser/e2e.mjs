// End-to-end test of the exgate web console in a real headless Chromium
// (Debian's /usr/bin/chromium driven by playwright-core). Run by
// cmd/exgate/console_browser_test.go, which starts the gateway (API and
// console, the sim exchange, SQLite in a temp dir) and passes in:
//
//   CONSOLE_URL, API_URL            where the gateway listens
//   LOGIN_URLS                      fresh one-time login links, space-separated (one per viewport)
//   EXPIRED_LOGIN_URL               a login link whose 10 minutes are over
//   ARTIFACTS                       where the screenshots go
//
// The flow is the "Must show" of issue 18, at 1280 px and at 390 px.
import { chromium } from "playwright-core";
import { createHmac } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const CONSOLE = env("CONSOLE_URL");
const API = env("API_URL");
const LOGINS = env("LOGIN_URLS").split(" ");
const EXPIRED = env("EXPIRED_LOGIN_URL");
const ARTIFACTS = env("ARTIFACTS");
mkdirSync(ARTIFACTS, { recursive: true });

// Playwright starts Chromium with a fresh temporary --user-data-dir of
// its own, removed when the browser closes (it refuses the flag in args:
// the isolated contexts below need its launch, not a persistent one).
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});

// sign is HMAC-SHA256 over the POST body's members in order (docs/contract.md 2.1).
function signedBody(secret, members) {
  const params = Object.entries(members).map(([k, v]) => `${k}=${v}`).join("&");
  const signature = createHmac("sha256", Buffer.from(secret, "utf8")).update(params).digest("hex");
  return JSON.stringify({ ...members, signature });
}

const step = (msg) => console.log(`e2e: ${msg}`);

async function newPage(width) {
  const context = await browser.newContext({ viewport: { width, height: width > 600 ? 900 : 844 } });
  const page = await context.newPage();
  const problems = [];
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("response", (r) => { if (r.status() === 404) problems.push(`404: ${r.url()}`); });
  return { context, page, problems };
}

async function shot(page, width, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
}

// noOverflow: the page itself never scrolls sideways, at 1280 px nor at
// 390 px; at desktop width no table overflows its box either (every
// column, the status included, is on screen), while at phone width a wide
// table may scroll inside its own box.
async function noOverflow(page, width, what) {
  // Measured on the page as loaded: after a form post, the new page's text
  // can be there before its stylesheet, and a page without its styles is
  // wider (the .scroll boxes do not scroll yet).
  await page.waitForLoadState("load");
  const w = await page.evaluate(() => document.documentElement.scrollWidth);
  if (w > width + 1) {
    // Name the widest elements that stick out, to say what to fix.
    const wide = await page.evaluate((vw) => [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > vw + 1 && !el.parentElement.closest(".scroll"))
      .slice(0, 5).map((el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className}:${Math.round(el.getBoundingClientRect().right)}`), width);
    assert.fail(`${what}: the page is ${w}px wide at a ${width}px viewport: ${wide.join(", ")}`);
  }
  if (width >= 1280) {
    const boxes = await page.evaluate(() => [...document.querySelectorAll(".scroll")]
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => `${el.firstElementChild ? "#" + el.firstElementChild.id : "?"}: ${el.scrollWidth}px in a ${el.clientWidth}px box`));
    assert.deepEqual(boxes, [], `${what}: tables wider than their box at ${width}px`);
  }
}

async function run(width, loginURL) {
  const tag = `w${width}`;
  const { context, page, problems } = await newPage(width);

  step(`${tag}: log in with a fresh one-time link`);
  await page.goto(loginURL);
  await shot(page, width, "login");
  await noOverflow(page, width, "login");
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL(`${CONSOLE}/keys`);

  step(`${tag}: the browser's own /favicon.ico is there`);
  {
    const r = await page.request.get(`${CONSOLE}/favicon.ico`);
    assert.equal(r.status(), 200);
    assert.match(r.headers()["content-type"], /^image\//);
  }

  step(`${tag}: the same link a second time is refused`);
  {
    const other = await newPage(width);
    await other.page.goto(loginURL);
    const [resp] = await Promise.all([
      other.page.waitForResponse((r) => r.url() === `${CONSOLE}/login` && r.request().method() === "POST"),
      other.page.getByRole("button", { name: "Log in" }).click(),
    ]);
    assert.equal(resp.status(), 403);
    await other.page.getByText("already used or expired").waitFor();
    await shot(other.page, width, "login-refused");
    const res = await other.page.goto(`${CONSOLE}/keys`);
    assert.equal(new URL(other.page.url()).pathname, "/login", "a refused login has no session");
    assert.ok(res.ok());
    await other.context.close();
  }

  step(`${tag}: an expired link is refused`);
  if (width === 1280) {
    const other = await newPage(width);
    await other.page.goto(EXPIRED);
    const [resp] = await Promise.all([
      other.page.waitForResponse((r) => r.url() === `${CONSOLE}/login` && r.request().method() === "POST"),
      other.page.getByRole("button", { name: "Log in" }).click(),
    ]);
    assert.equal(resp.status(), 403);
    await other.context.close();
  }

  step(`${tag}: keyboard: the first Tab reaches the skip link, the next ones the sections`);
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Skip to content");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("href")), "/keys");
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, "none", "focus is visible");

  step(`${tag}: create a client key; its secret is shown once`);
  await page.getByLabel("Label").fill(`e2e-${width}`);
  await page.getByRole("button", { name: "Create key" }).click();
  const apiKey = (await page.locator("#new-api-key").textContent()).trim();
  const secret = (await page.locator("#new-secret").textContent()).trim();
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
  await page.getByRole("button", { name: "Copy secret" }).click();
  await shot(page, width, "key-created");
  await page.goto(`${CONSOLE}/keys`);
  assert.ok(!(await page.content()).includes(secret), "the keys page shows the secret again");
  await noOverflow(page, width, "keys");
  await shot(page, width, "keys");

  step(`${tag}: add a sim exchange key`);
  await page.locator(`tr[data-api-key="${apiKey}"] a`, { hasText: "Exchange keys" }).click();
  await page.waitForURL(`${CONSOLE}/keys/${apiKey}`);
  const form = page.locator("#add-exchange-key");
  await form.locator('input[name="name"]').fill("paper");
  await form.locator('select[name="exchange"]').selectOption("sim");
  await form.locator('input[name="secret"]').fill("not-needed-for-sim-SECRET");
  await form.locator('input[name="permissions"][value="withdraw"]').check();
  await page.getByRole("button", { name: "Add exchange key" }).click();
  await page.getByText("exchange key added").waitFor();
  assert.ok(!(await page.content()).includes("not-needed-for-sim-SECRET"));
  await noOverflow(page, width, "exchange keys");
  await shot(page, width, "exchange-keys");

  step(`${tag}: place a limit order through the signed API`);
  const clientOrderId = `e2e-${width}`;
  const body = signedBody(secret, {
    asset1: "BTC", asset2: "USDT", side: "BUY", quantity: "0.01", price: "10000.5", clientOrderId, timestamp: Date.now(),
  });
  const placed = await fetch(`${API}/v1/order/limit`, {
    method: "POST", body,
    headers: { "Content-Type": "application/json", "X-API-KEY": apiKey, "X-API-EXCHANGE-KEY": "paper" },
  });
  const order = await placed.json();
  assert.equal(placed.status, 200, JSON.stringify(order));
  assert.equal(order.status, "PENDING");

  step(`${tag}: a withdrawal the exchange's rules refuse (below the network's minimum)`);
  const refusedBody = signedBody(secret, {
    asset: "ETH", network: "ETH", address: "0x52908400098527886E0F7030069857D2E4169EE7", amount: "0.001",
    clientWithdrawalId: `e2e-w-${width}`, timestamp: Date.now(),
  });
  const refused = await fetch(`${API}/v1/wallet/withdraw`, {
    method: "POST", body: refusedBody,
    headers: { "Content-Type": "application/json", "X-API-KEY": apiKey, "X-API-EXCHANGE-KEY": "paper" },
  });
  assert.equal(refused.status, 422, await refused.text());

  step(`${tag}: the account is one click from the keys page after login`);
  await page.goto(`${CONSOLE}/keys`);
  await page.locator(`#accounts a[href="/keys/${apiKey}/exchange-keys/paper"]`).click();
  await page.waitForURL(`${CONSOLE}/keys/${apiKey}/exchange-keys/paper`);

  step(`${tag}: the order is in the console's open orders; cancel it there, after a confirmation`);
  const row = page.locator(`#open-orders tr[data-order-id="${order.id}"]`);
  await row.waitFor();
  assert.match(await row.textContent(), /10000\.5/);
  assert.match(await row.textContent(), new RegExp(clientOrderId));
  // The refused withdrawal is listed with its amount and address, in
  // columns, the reason under its status.
  const wrow = page.locator("#journal-withdrawals tr", { hasText: `e2e-w-${width}` });
  assert.match(await wrow.textContent(), /0\.001/);
  assert.match(await wrow.locator("code.clip").getAttribute("title"), /^0x52908400098527886E0F7030069857D2E4169EE7$/);
  assert.match(await wrow.textContent(), /WITHDRAWAL_REJECTED/);
  await noOverflow(page, width, "account");
  await shot(page, width, "account-open-order");
  // Dismissed: nothing is canceled.
  page.once("dialog", (d) => d.dismiss());
  await row.getByRole("button", { name: `Cancel order ${order.id}` }).click();
  assert.equal(await page.locator(`#open-orders tr[data-order-id="${order.id}"]`).count(), 1, "a dismissed confirmation canceled the order");
  page.once("dialog", (d) => { assert.match(d.message(), new RegExp(`Cancel order ${order.id}`)); d.accept(); });
  await row.getByRole("button", { name: `Cancel order ${order.id}` }).click();
  await page.getByText(`order ${order.id} is CANCELED`).waitFor();
  assert.equal(await page.locator(`#open-orders tr[data-order-id="${order.id}"]`).count(), 0);
  const journaled = page.locator(`#journal-orders tr[data-order-id="${order.id}"]`);
  assert.match(await journaled.textContent(), /CANCELED/);
  await noOverflow(page, width, "account after the cancel");
  await shot(page, width, "account");

  step(`${tag}: the market page draws BTC/USDT candles and the depth`);
  await page.goto(`${CONSOLE}/market?exchange=sim&symbol=BTC/USDT&interval=1m`);
  await page.waitForFunction(() => window.exgateMarket && window.exgateMarket.candles > 0 && window.exgateMarket.levels > 0);
  // Live from the gateway's stream hub (sim's book moves every second),
  // not polled.
  await page.waitForFunction(() => window.exgateMarket.live && window.exgateMarket.updates > 1);
  assert.equal(await page.locator("#market-status").textContent(), "live (streamed)");
  const drawn = await page.evaluate(() => {
    const inked = (c) => {
      const ctx = c.getContext("2d");
      if (!ctx || !c.width || !c.height) return 0;
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200)) n++;
      return n;
    };
    const candles = [...document.querySelectorAll("#candles canvas")].reduce((s, c) => s + inked(c), 0);
    return { candles, depth: inked(document.getElementById("depth")) };
  });
  assert.ok(drawn.candles > 500, `candle chart pixels: ${drawn.candles}`);
  assert.ok(drawn.depth > 500, `depth chart pixels: ${drawn.depth}`);
  assert.match(await page.locator("#last-price").textContent(), /^\d+(\.\d+)?$/);
  // A live update does not move the layout.
  const before = await page.locator("#depth").boundingBox();
  await page.waitForTimeout(2500);
  const after = await page.locator("#depth").boundingBox();
  assert.deepEqual(after, before, "the depth chart moved on a live update");
  await noOverflow(page, width, "market");
  await shot(page, width, "market");

  step(`${tag}: an unknown pair is said once, with the pairs to pick from, and not polled`);
  {
    const other = await newPage(width);
    const reads = [];
    other.page.on("request", (r) => { if (r.url().includes("/api/market/")) reads.push(r.url()); });
    await other.context.addCookies(await context.cookies());
    await other.page.goto(`${CONSOLE}/market?exchange=sim&symbol=NOPE/USDT&interval=1m`);
    await other.page.getByText("NOPE/USDT is not listed on sim").waitFor();
    await other.page.getByRole("link", { name: "BTC/USDT" }).first().waitFor();
    // Two polling periods of the old page.
    await other.page.waitForTimeout(4500);
    assert.deepEqual(reads, [], "the page of an unknown pair reads it");
    assert.deepEqual(other.problems, [], "the page of an unknown pair logged errors");
    await noOverflow(other.page, width, "market of an unknown pair");
    await shot(other.page, width, "market-unknown-pair");
    await other.context.close();
  }

  step(`${tag}: the health page`);
  await page.goto(`${CONSOLE}/health`);
  await page.getByText("reconciliation backlog").waitFor();
  // No exchange key here uses Binance: its checks are not made, and say
  // so rather than showing a green ok.
  const binance = page.locator("#health tr", { hasText: "binance reachability" });
  assert.match(await binance.locator(".badge").textContent(), /^unchecked$/);
  for (const r of await page.locator("#health tr", { hasText: "not checked" }).all()) {
    assert.notEqual(await r.locator(".badge").textContent(), "ok", `${await r.textContent()} is shown ok`);
  }
  await noOverflow(page, width, "health");
  await shot(page, width, "health");

  step(`${tag}: a cross-site form post is refused`);
  {
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    // A page of another site (served by Playwright, no network), even
    // knowing the CSRF token: the browser does not send the SameSite=Strict
    // cookie and says Sec-Fetch-Site: cross-site.
    const evil = await context.newPage();
    await evil.route("http://evil.example/**", (r) => r.fulfill({
      contentType: "text/html",
      body: `<form method="post" action="${CONSOLE}/keys/${apiKey}/revoke"><input type="hidden" name="csrf" value="${csrf}"><button>win a prize</button></form>`,
    }));
    await evil.goto("http://evil.example/prize");
    let [resp] = await Promise.all([
      evil.waitForResponse((r) => r.url().endsWith("/revoke")),
      evil.getByRole("button", { name: "win a prize" }).click(),
    ]);
    assert.equal(resp.status(), 403);
    // Same site, other origin (the API's port): the cookie is sent, the
    // origin check refuses it.
    await evil.goto(`${API}/healthz`);
    await evil.setContent(`<form method="post" action="${CONSOLE}/keys/${apiKey}/revoke"><input type="hidden" name="csrf" value="${csrf}"><button>win a prize</button></form>`);
    [resp] = await Promise.all([
      evil.waitForResponse((r) => r.url().endsWith("/revoke")),
      evil.getByRole("button", { name: "win a prize" }).click(),
    ]);
    assert.equal(resp.status(), 403);
    await evil.getByText("did not come from the console").waitFor();
    await evil.close();
    await page.goto(`${CONSOLE}/keys`);
    assert.match(await page.locator(`tr[data-api-key="${apiKey}"]`).textContent(), /active/, "the key was revoked by a cross-site post");
  }

  step(`${tag}: the console's JSON refuses a request without a session`);
  {
    const anon = await browser.newContext();
    const r = await anon.request.get(`${CONSOLE}/api/market/klines`);
    assert.equal(r.status(), 401);
    await anon.close();
  }

  assert.deepEqual(problems, [], "the pages logged errors (a CSP violation shows here)");
  await context.close();
}

try {
  await run(1280, LOGINS[0]);
  await run(390, LOGINS[1]);
  step("all passed");
} finally {
  await browser.close();
}

// Level A: the workbench as a person sees it, in headless Chromium: the MS101 squiggle, its
// Problems row, the Ascend Lens sidebar with the Devices view, F5 on a pyACL script stopping at
// its ACL error, and a notebook whose profile output our renderer draws. Screenshots go to OUT_DIR.
// usage: node drive.js URL OUT_DIR   (env E2E_T0 = ms epoch of code-server start)
const { chromium } = require("playwright-core"); // resolved through NODE_PATH (tools dir)
const fs = require("fs");
const os = require("os");
const path = require("path");

const [url, outDir] = process.argv.slice(2);
const t0 = Number(process.env.E2E_T0) || Date.now();
const lap = (m) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);
const shot = (page, name) => page.screenshot({ path: path.join(outDir, name) });

async function quickOpen(page, fileName) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("Control+P");
  await page.waitForSelector(".quick-input-widget input", { state: "visible", timeout: 20000 });
  await page.keyboard.type(fileName);
  await page.waitForSelector(`.quick-input-list .monaco-list-row[aria-label*="${fileName}"]`, { timeout: 20000 });
  await page.keyboard.press("Enter");
  await page.waitForSelector(`.tab[aria-label*="${fileName}"]`, { timeout: 20000 });
}

async function runCommand(page, title) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { state: "visible", timeout: 20000 });
  await page.keyboard.type(title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 20000 });
  await page.keyboard.press("Enter");
}

// The callback runs in the page, where `document` exists.
/* global document */
async function findInFrames(page, text, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    for (const f of page.frames()) {
      const hit = await f.evaluate((t) => !!document.body && document.body.innerText.includes(t), text).catch(() => false);
      if (hit) return f;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`"${text}" not found in any frame`);
}

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "pw-profile-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.E2E_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  let phase = "load";
  try {
    await page.goto(url);
    await page.waitForSelector(".monaco-workbench", { timeout: 90000 });
    lap("workbench loaded");

    phase = "squiggle";
    await page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } }).catch(() => {});
    await quickOpen(page, "graph.py");
    await page.waitForSelector(".monaco-editor .squiggly-error", { timeout: 90000 });
    lap("MS101 squiggle visible");

    phase = "problems";
    await page.keyboard.press("Control+Shift+M");
    const row = page.locator(".markers-panel .monaco-list-row", { hasText: "MS101" }).first();
    await row.waitFor({ timeout: 30000 });
    lap("Problems: " + (await row.innerText()).replace(/\s+/g, " "));
    await shot(page, "shot-diagnostics.png");

    phase = "devices view";
    await page.locator('.activitybar [aria-label*="Ascend Lens"]').first().click();
    await page.locator(".monaco-list-row", { hasText: "Device 0" }).first().waitFor({ timeout: 30000 });
    lap("Devices view: Device 0");
    await page.locator(".pane-body .monaco-list-row", { hasText: "MS101" }).first().waitFor({ timeout: 30000 });
    lap("Problems by Rule: MS101");
    await shot(page, "shot-sidebar.png");

    phase = "F5 at an ACL error";
    // No launch.json: F5 runs the open file under our debug adapter, which stops at the line of
    // the failing aclrtMemcpy and shows the ACL code in the exception widget.
    await quickOpen(page, "bad_memcpy.py");
    await page.keyboard.press("F5");
    const picker = page.locator(".quick-input-list .monaco-list-row", { hasText: "Ascend" }).first();
    if (await picker.isVisible({ timeout: 3000 }).catch(() => false)) await picker.click();
    await page.waitForSelector(".debug-toolbar", { state: "visible", timeout: 90000 });
    await page.waitForSelector(".monaco-editor .debug-top-stack-frame-line", { timeout: 90000 });
    const widget = page.locator(".exception-widget", { hasText: "107000" }).first();
    await widget.waitFor({ timeout: 30000 });
    lap("F5 stopped: " + (await widget.innerText()).replace(/\s+/g, " ").slice(0, 100));
    await shot(page, "shot-debug-acl-error.png");
    await page.keyboard.press("Shift+F5");
    await page.waitForSelector(".debug-toolbar", { state: "hidden", timeout: 30000 }).catch(() => lap("(debug toolbar still visible)"));

    phase = "notebook renderer";
    await quickOpen(page, "nb.ipynb");
    await page.waitForSelector(".notebook-editor .cell", { timeout: 30000 });
    await runCommand(page, "Notebook: Run All");
    // The profile renderer's summary line, inside the output webview's frames.
    await findInFrames(page, "simulated device time", 120000);
    lap("notebook: profile rendered");
    await shot(page, "shot-notebook.png");
    console.log("E2E UI OK");
  } catch (e) {
    console.log(`E2E UI FAIL in phase ${phase}:`, e.message.split("\n")[0]);
    await shot(page, "shot-fail.png").catch(() => {});
    process.exitCode = 1;
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
})();

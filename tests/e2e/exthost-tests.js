// Level B launcher: opens the workbench with extensionDevelopmentPath/extensionTestsPath in the
// payload (honoured with --enable-smoke-test-driver), so suite/index.js runs in the real Node
// extension host. Prints the suite's "N passed, N failed" line; exit 0 only when it passed.
// usage: node exthost-tests.js BASE_URL WORKSPACE_DIR EXT_DEV_DIR TESTS_DIR
const { chromium } = require("playwright-core"); // resolved through NODE_PATH (tools dir)
const fs = require("fs");
const os = require("os");
const path = require("path");
const util = require("util");

const [base, ws, dev, tests] = process.argv.slice(2);
const TIMEOUT_MS = Number(process.env.E2E_EXTHOST_TIMEOUT_MS) || 420000;

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "pw-profile-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.E2E_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  let exitCode = null;
  await page.exposeFunction("codeAutomationLog", (type, args) => {
    const msg = util.format(...(Array.isArray(args) ? args : [args]));
    if (/^\d+ passed, \d+ failed$/.test(msg.trim())) console.log(msg.trim());
    else if (!/open-vsx\.org|ENOTFOUND/.test(msg)) console.log(`[vscode ${type}] ${msg}`);
  });
  await page.exposeFunction("codeAutomationExit", (code) => {
    exitCode = code;
  });
  const authority = new URL(base).host;
  const payload = [
    ["extensionDevelopmentPath", `vscode-remote://${authority}${dev}`],
    ["extensionTestsPath", `vscode-remote://${authority}${tests}`],
  ];
  const url = `${base}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const t0 = Date.now();
  await page.goto(url);
  while (exitCode === null && Date.now() - t0 < TIMEOUT_MS) await page.waitForTimeout(250);
  console.log(`extension-host tests exit code: ${exitCode} after ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
  process.exit(exitCode === 0 ? 0 : 1);
})();

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  chooseInterpreter,
  cliArgs,
  DEFAULTS,
  normalizeRuleCodes,
  RESOURCE_KEYS,
  resolveSettings,
  substitute,
  toServerSettings,
  WINDOW_KEYS,
  type SubstitutionContext,
} from "../../extension/common/settingsCore";

const ROOT = join(__dirname, "..", "..", "..");

const ctx: SubstitutionContext = { workspaceFolder: "/ws", userHome: "/home/u", cwd: "/cwd", env: { VENV: "/opt/venv" } };

describe("setting scopes", () => {
  // VS Code logs a warning each time a window-scoped setting is read for a resource.
  it("reads per resource exactly the settings package.json declares resource-scoped", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    const scopes = new Map(
      Object.entries(manifest.contributes.configuration.properties).map(([k, v]) => [k.replace(/^ascend-lens\./, ""), v.scope ?? "window"]),
    );
    for (const key of RESOURCE_KEYS) assert.equal(scopes.get(key), "resource", key);
    for (const key of WINDOW_KEYS) assert.equal(scopes.get(key), "window", key);
    const read = new Set<string>([...RESOURCE_KEYS, ...WINDOW_KEYS]);
    const unread = [...scopes.keys()].filter((k) => !read.has(k));
    assert.deepEqual(unread, ["trace.server"]); // read by vscode-languageclient itself
  });
});

describe("substitute", () => {
  it("replaces the documented variables and a leading ~", () => {
    assert.equal(substitute("${workspaceFolder}/.venv/bin/python", ctx), "/ws/.venv/bin/python");
    assert.equal(substitute("${userHome}/py", ctx), "/home/u/py");
    assert.equal(substitute("${cwd}/x", ctx), "/cwd/x");
    assert.equal(substitute("${env:VENV}/bin/python", ctx), "/opt/venv/bin/python");
    assert.equal(substitute("${env:MISSING}x", ctx), "x");
    assert.equal(substitute("~/venv/bin/python", ctx), "/home/u/venv/bin/python");
  });

  it("leaves unknown variables, and ${workspaceFolder} without a folder, visible", () => {
    assert.equal(substitute("${foo}/p", ctx), "${foo}/p");
    assert.equal(substitute("${workspaceFolder}/p", { ...ctx, workspaceFolder: undefined }), "${workspaceFolder}/p");
  });
});

describe("rule codes", () => {
  it("normalises, de-duplicates and reports what is not a code", () => {
    assert.deepEqual(normalizeRuleCodes([" ms101", "MS101", "NPU", "hccl301", "MS-1", 3]), {
      codes: ["MS101", "NPU", "HCCL301"],
      invalid: ["MS-1", "3"],
    });
    assert.deepEqual(normalizeRuleCodes("MS101"), { codes: [], invalid: ['"MS101"'] });
  });
});

describe("resolveSettings", () => {
  it("gives the defaults for empty settings", () => {
    const { settings, warnings } = resolveSettings({}, ctx);
    assert.deepEqual(settings, { workspace: "/ws", ...DEFAULTS });
    assert.deepEqual(warnings, []);
  });

  it("reads every setting", () => {
    const { settings, warnings } = resolveSettings(
      {
        interpreter: " ${workspaceFolder}/.venv/bin/python ",
        "rules.select": ["MS"],
        "rules.ignore": ["ms130"],
        syntaxLevel: "STRICT",
        "device.profile": "310P",
        "device.count": 8,
        logLevel: "debug",
      },
      ctx,
    );
    assert.deepEqual(warnings, []);
    assert.deepEqual(settings, {
      workspace: "/ws",
      interpreter: "/ws/.venv/bin/python",
      select: ["MS"],
      ignore: ["MS130"],
      syntaxLevel: "strict",
      deviceProfile: "310P",
      deviceCount: 8,
      logLevel: "debug",
    });
  });

  it("replaces bad values by defaults and says so", () => {
    const { settings, warnings } = resolveSettings({ syntaxLevel: "fast", "device.count": 0, "device.profile": "", logLevel: 3, interpreter: 7 }, ctx);
    assert.equal(settings.syntaxLevel, "auto");
    assert.equal(settings.deviceCount, 1);
    assert.equal(settings.deviceProfile, "910B");
    assert.equal(settings.logLevel, "info");
    assert.equal(settings.interpreter, "");
    assert.deepEqual(warnings, [
      'ascend-lens.interpreter: ignoring 7, using ""',
      'ascend-lens.syntaxLevel: ignoring "fast", using "auto"',
      'ascend-lens.device.profile: ignoring "", using "910B"',
      "ascend-lens.device.count: ignoring 0, using 1",
      'ascend-lens.logLevel: ignoring 3, using "info"',
    ]);
  });
});

describe("server settings", () => {
  it("sends only what the user set, so pyproject settings are not overridden", () => {
    const { settings } = resolveSettings({}, ctx);
    assert.deepEqual(toServerSettings(settings), {});
    assert.deepEqual(toServerSettings({ ...settings, select: ["MS1"], ignore: ["NPU208"], syntaxLevel: "compatible" }), {
      select: ["MS1"],
      ignore: ["NPU208"],
      syntaxLevel: "compatible",
    });
  });

  it("starts subcommands through the interpreter", () => {
    assert.deepEqual(cliArgs("server"), ["-m", "ascend_lens", "server"]);
    assert.deepEqual(cliArgs("kernel", "bridge"), ["-m", "ascend_lens", "kernel", "bridge"]);
  });
});

describe("interpreter ladder", () => {
  it("prefers the setting, then Python Environments, then the Python extension, then python3", () => {
    const all = { setting: "/s/python", pythonEnvironments: "/e/python", pythonExtension: "/x/python" };
    assert.deepEqual(chooseInterpreter(all, "linux"), { path: "/s/python", source: "setting" });
    assert.deepEqual(chooseInterpreter({ ...all, setting: "" }, "linux"), { path: "/e/python", source: "python-environments" });
    assert.deepEqual(chooseInterpreter({ pythonExtension: "/x/python" }, "linux"), { path: "/x/python", source: "python-extension" });
    assert.deepEqual(chooseInterpreter({}, "linux"), { path: "python3", source: "default" });
    assert.deepEqual(chooseInterpreter({}, "win32"), { path: "python", source: "default" });
  });
});

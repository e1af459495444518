// Settings resolution without VS Code: variable substitution, validation with defaults, the
// interpreter ladder and the server's initializationOptions. settings.ts feeds it from the workspace.

/** "auto": leave it to pyproject's `[tool.ascend-lens] syntax-level` or `MS_DEV_JIT_SYNTAX_LEVEL`. */
export const SYNTAX_LEVELS = ["auto", "strict", "compatible", "lax"] as const;
export type SyntaxLevel = (typeof SYNTAX_LEVELS)[number];
export const LOG_LEVELS = ["error", "warning", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Settings of one workspace folder (or of the window when there is none), after resolution. */
export interface Settings {
  /** Folder path the settings belong to, or "" for the window. */
  workspace: string;
  /** Explicit interpreter from `ascend-lens.interpreter`, substituted; "" when unset. */
  interpreter: string;
  select: string[];
  ignore: string[];
  syntaxLevel: SyntaxLevel;
  deviceProfile: string;
  deviceCount: number;
  logLevel: LogLevel;
}

export const DEFAULTS: Omit<Settings, "workspace"> = {
  interpreter: "",
  select: [],
  ignore: [],
  syntaxLevel: "auto",
  deviceProfile: "910B",
  deviceCount: 1,
  logLevel: "info",
};

/** Setting keys (under `ascend-lens.`) whose change restarts the language server (device settings only
 * matter to run, debug and the kernel, which read them each time). */
export const RESTART_KEYS = ["interpreter", "rules.select", "rules.ignore", "syntaxLevel", "logLevel"] as const;

export interface SubstitutionContext {
  workspaceFolder?: string;
  userHome: string;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Replaces `${workspaceFolder}`, `${userHome}`, `${cwd}` and `${env:NAME}` in `value`, and a leading `~/`.
 * Unknown variables are left as they are so that the log shows what was not understood.
 */
export function substitute(value: string, ctx: SubstitutionContext): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|cwd|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (m, name: string, envName?: string) => {
    if (envName !== undefined) return ctx.env[envName] ?? "";
    if (name === "workspaceFolder") return ctx.workspaceFolder ?? m;
    if (name === "userHome") return ctx.userHome;
    return ctx.cwd;
  });
  if (out === "~" || out.startsWith("~/")) out = ctx.userHome + out.slice(1);
  return out;
}

const RULE_CODE = /^[A-Z]+[0-9]*$/;

/** Rule codes/prefixes: trimmed, upper-cased, de-duplicated; anything else is reported, not passed on. */
export function normalizeRuleCodes(value: unknown): { codes: string[]; invalid: string[] } {
  const codes: string[] = [];
  const invalid: string[] = [];
  if (!Array.isArray(value)) return { codes, invalid: value === undefined ? [] : [JSON.stringify(value)] };
  for (const item of value) {
    const code = typeof item === "string" ? item.trim().toUpperCase() : "";
    if (!RULE_CODE.test(code)) invalid.push(typeof item === "string" ? item : JSON.stringify(item));
    else if (!codes.includes(code)) codes.push(code);
  }
  return { codes, invalid };
}

/** Keys read per workspace folder: package.json gives them `"scope": "resource"`. */
export const RESOURCE_KEYS = ["interpreter", "rules.select", "rules.ignore", "syntaxLevel", "device.profile", "device.count"] as const;
/** Keys of the one server per window, read without a resource: window scope in package.json
 * (VS Code warns when a window-scoped setting is read for a resource). */
export const WINDOW_KEYS = ["logLevel"] as const;

/** What `vscode.workspace.getConfiguration("ascend-lens")` gives, read key by key. */
export type RawSettings = Partial<Record<(typeof RESOURCE_KEYS)[number] | (typeof WINDOW_KEYS)[number], unknown>>;

/** Validates raw values; a bad value is replaced by its default and named in `warnings`. */
export function resolveSettings(
  raw: RawSettings,
  ctx: SubstitutionContext,
): { settings: Settings; warnings: string[] } {
  const warnings: string[] = [];
  const bad = (key: string, value: unknown, used: unknown): void => {
    warnings.push(`ascend-lens.${key}: ignoring ${JSON.stringify(value)}, using ${JSON.stringify(used)}`);
  };

  let interpreter = DEFAULTS.interpreter;
  if (typeof raw.interpreter === "string") interpreter = substitute(raw.interpreter.trim(), ctx);
  else if (raw.interpreter !== undefined) bad("interpreter", raw.interpreter, interpreter);

  const select = normalizeRuleCodes(raw["rules.select"] ?? []);
  for (const v of select.invalid) warnings.push(`ascend-lens.rules.select: ${JSON.stringify(v)} is not a rule code or prefix`);
  const ignore = normalizeRuleCodes(raw["rules.ignore"] ?? []);
  for (const v of ignore.invalid) warnings.push(`ascend-lens.rules.ignore: ${JSON.stringify(v)} is not a rule code or prefix`);

  let syntaxLevel = DEFAULTS.syntaxLevel;
  const level = typeof raw.syntaxLevel === "string" ? raw.syntaxLevel.toLowerCase() : raw.syntaxLevel;
  if ((SYNTAX_LEVELS as readonly unknown[]).includes(level)) syntaxLevel = level as SyntaxLevel;
  else if (raw.syntaxLevel !== undefined) bad("syntaxLevel", raw.syntaxLevel, syntaxLevel);

  let deviceProfile = DEFAULTS.deviceProfile;
  const dp = raw["device.profile"];
  if (typeof dp === "string" && dp.trim() !== "") deviceProfile = dp.trim();
  else if (dp !== undefined) bad("device.profile", dp, deviceProfile);

  let deviceCount = DEFAULTS.deviceCount;
  const dc = raw["device.count"];
  if (typeof dc === "number" && Number.isInteger(dc) && dc >= 1 && dc <= 16) deviceCount = dc;
  else if (dc !== undefined) bad("device.count", dc, deviceCount);

  let logLevel = DEFAULTS.logLevel;
  if ((LOG_LEVELS as readonly unknown[]).includes(raw.logLevel)) logLevel = raw.logLevel as LogLevel;
  else if (raw.logLevel !== undefined) bad("logLevel", raw.logLevel, logLevel);

  return {
    settings: {
      workspace: ctx.workspaceFolder ?? "",
      interpreter,
      select: select.codes,
      ignore: ignore.codes,
      syntaxLevel,
      deviceProfile,
      deviceCount,
      logLevel,
    },
    warnings,
  };
}

export type InterpreterSource = "setting" | "python-environments" | "python-extension" | "default";

export interface InterpreterChoice {
  path: string;
  source: InterpreterSource;
}

/**
 * The interpreter ladder: the explicit setting, then the Python Environments extension, then the
 * Python extension, then `python3` (`python` on Windows). Empty candidates are skipped.
 */
export function chooseInterpreter(
  candidates: { setting?: string; pythonEnvironments?: string; pythonExtension?: string },
  platform: string = process.platform,
): InterpreterChoice {
  if (candidates.setting) return { path: candidates.setting, source: "setting" };
  if (candidates.pythonEnvironments) return { path: candidates.pythonEnvironments, source: "python-environments" };
  if (candidates.pythonExtension) return { path: candidates.pythonExtension, source: "python-extension" };
  return { path: platform === "win32" ? "python" : "python3", source: "default" };
}

/**
 * The server-facing lint settings (`initializationOptions`, read by npu_lsp/settings_lsp.py). Only
 * keys the user set are sent: the server lets editor settings win over pyproject's
 * `[tool.ascend-lens]` key by key, so an empty `select` sent as `[]` would switch every rule off,
 * and a default level would hide the project's own choice.
 */
export interface ServerSettings {
  select?: string[];
  ignore?: string[];
  syntaxLevel?: Exclude<SyntaxLevel, "auto">;
}

export function toServerSettings(s: Settings): ServerSettings {
  const out: ServerSettings = {};
  if (s.select.length > 0) out.select = s.select;
  if (s.ignore.length > 0) out.ignore = s.ignore;
  if (s.syntaxLevel !== "auto") out.syntaxLevel = s.syntaxLevel;
  return out;
}

/** Arguments that start each `ascend-lens` subcommand through an interpreter (no console script needed). */
export function cliArgs(subcommand: string, ...rest: string[]): string[] {
  return ["-m", "ascend_lens", subcommand, ...rest];
}

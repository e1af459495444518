// Identity, defined once in package.json (serverInfo) and reused for settings, commands and logs.
import * as path from "node:path";

// esbuild inlines the manifest; only the fields below are read.
import manifest from "../../package.json";

export const EXTENSION_ROOT = path.resolve(__dirname, "..");
/** "ascend-lens": settings namespace, command prefix, LanguageClient id. */
export const MODULE = manifest.serverInfo.module;
/** "Ascend Lens": output channel and status bar name. */
export const DISPLAY_NAME = manifest.serverInfo.name;
export const VERSION = manifest.version;
/** The Python distribution that provides the `ascend-lens` command. */
export const PY_DISTRIBUTION = "ascend-lens";
/** Where scripts/package-extension puts the wheel inside the .vsix. */
export const BUNDLED_WHEEL_DIR = path.join(EXTENSION_ROOT, "out", "bundled");
/** Debounce for restarts triggered by settings or interpreter changes. */
export const RESTART_DELAY_MS = 1000;

export const VIEW_DEVICES = `${MODULE}.devices`;
export const VIEW_PROFILE = `${MODULE}.profile`;
export const VIEW_PROBLEMS = `${MODULE}.problemsByRule`;

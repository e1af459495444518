// Where the bundled wheel and a managed environment's interpreter are. Pure (file system only).
import * as fs from "node:fs";
import * as path from "node:path";

/** The newest `ascend_lens-*.whl` in `dir`, or undefined (a development build has none). */
export function bundledWheel(dir: string): string | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return undefined;
  }
  const wheels = names.filter((n) => /^ascend_lens-.*\.whl$/.test(n));
  wheels.sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  const wheel = wheels.pop();
  return wheel ? path.join(dir, wheel) : undefined;
}

/** The interpreter of a venv created at `venv`. */
export function venvPython(venv: string, platform: string): string {
  return platform === "win32" ? path.join(venv, "Scripts", "python.exe") : path.join(venv, "bin", "python");
}

// Runs a short-lived process and collects its output. No `vscode`: used for interpreter probes,
// kernelspec install and pip, and tested directly.
import { spawn } from "node:child_process";

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not start at all (ENOENT etc.). */
  spawnError?: string;
  timedOut: boolean;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Streams each stderr/stdout chunk as it arrives (pip progress into the log). */
  onOutput?: (text: string) => void;
  /** Cancels the run (kills the process). */
  signal?: AbortSignal;
}

export function runProcess(command: string, args: string[], opts: RunOptions = {}): Promise<ProcessResult> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let done = false;
    const finish = (r: Omit<ProcessResult, "stdout" | "stderr" | "timedOut">): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...r, stdout, stderr, timedOut });
    };
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], signal: opts.signal });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill();
    }, opts.timeoutMs ?? 60_000);
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
      opts.onOutput?.(c);
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
      opts.onOutput?.(c);
    });
    child.on("error", (e) => finish({ code: null, spawnError: e.message }));
    child.on("close", (code) => finish({ code }));
  });
}

/** One line saying why a run failed, for messages and logs. */
export function describeFailure(command: string, r: ProcessResult): string {
  if (r.spawnError) return `${command} could not be started: ${r.spawnError}`;
  if (r.timedOut) return `${command} did not finish in time`;
  const last = r.stderr.trim().split("\n").slice(-1)[0] ?? "";
  return `${command} exited with code ${r.code ?? "?"}${last ? `: ${last}` : ""}`;
}

/** Python that prints the installed `ascend-lens` version, or exits 3 when it is missing. */
export const PROBE_PACKAGE =
  "import sys\n" +
  "try:\n" +
  "    from importlib.metadata import version\n" +
  "    v = version('ascend-lens')\n" +
  "    import ascend_lens.cli\n" +
  "except Exception as e:\n" +
  "    print(type(e).__name__, e, file=sys.stderr); sys.exit(3)\n" +
  "print(v)\n";

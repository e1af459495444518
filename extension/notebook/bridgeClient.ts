// Runs `ascend-lens kernel bridge` as a child process and speaks bridgeProtocol to it.
// No `vscode` import: tests drive it against a fake bridge process.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { BridgeSession, LineDecoder, type ExecutionSink, type Notice, type Reply } from "./bridgeProtocol";

export interface BridgeOptions {
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  onNotice?: (n: Notice) => void;
  /** Bridge stderr and protocol complaints, one line at a time. */
  onLog?: (line: string) => void;
  /** Called once when the process is gone, with why. */
  onExit?: (reason: string) => void;
}

/** Raised to callers waiting on a bridge that died or could not start. */
export class BridgeExitedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BridgeExitedError";
  }
}

export class BridgeClient {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly session: BridgeSession;
  private readonly ready: Promise<void>;
  private exited = false;
  /** The last bridge-level error message, to explain an exit. */
  private lastFailure: string | undefined;

  constructor(opts: BridgeOptions) {
    const log = opts.onLog ?? (() => undefined);
    let markReady: () => void = () => undefined;
    let failReady: (e: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    // A caller that never awaits ready must not see an unhandled rejection.
    this.ready.catch(() => undefined);

    this.proc = spawn(opts.command, opts.args, { cwd: opts.cwd, env: opts.env, stdio: "pipe" });
    this.session = new BridgeSession(
      (line) => {
        if (this.exited) throw new BridgeExitedError("the kernel bridge is not running");
        this.proc.stdin.write(line);
      },
      (notice) => {
        if (notice.kind === "ready") markReady();
        if (notice.kind === "failure") this.lastFailure = notice.message;
        opts.onNotice?.(notice);
      },
      (why) => log(`bridge protocol: ${why}`),
    );

    const out = new LineDecoder();
    this.proc.stdout.setEncoding("utf8");
    this.proc.stdout.on("data", (chunk: string) => out.push(chunk).forEach((l) => this.session.receive(l)));
    const err = new LineDecoder();
    this.proc.stderr.setEncoding("utf8");
    this.proc.stderr.on("data", (chunk: string) => err.push(chunk).forEach(log));
    this.proc.stdin.on("error", (e) => log(`bridge stdin: ${e.message}`));

    const finish = (why: string): void => {
      if (this.exited) return;
      this.exited = true;
      out.flush().forEach((l) => this.session.receive(l));
      err.flush().forEach(log);
      const reason = this.lastFailure ? `${why}: ${this.lastFailure}` : why;
      const error = new BridgeExitedError(reason);
      this.session.close(error);
      failReady(error);
      opts.onExit?.(reason);
    };
    this.proc.on("error", (e) => finish(`could not start ${opts.command}: ${e.message}`));
    this.proc.on("exit", (code, signal) =>
      finish(signal ? `the kernel bridge was stopped by ${signal}` : `the kernel bridge exited with code ${code ?? "?"}`),
    );
  }

  get running(): boolean {
    return !this.exited;
  }

  /** Resolves when the bridge has said it is ready; rejects if it exits first. */
  waitReady(): Promise<void> {
    return this.ready;
  }

  async execute(code: string, sink: ExecutionSink): Promise<Reply> {
    await this.ready;
    return this.session.execute(code, sink);
  }

  async interrupt(): Promise<Reply> {
    await this.ready;
    return this.session.request("interrupt");
  }

  /** Asks for a `state` event now (the Devices view's refresh). */
  async requestState(): Promise<Reply> {
    await this.ready;
    return this.session.request("state");
  }

  async restart(): Promise<Reply> {
    await this.ready;
    return this.session.request("restart");
  }

  /** Asks the bridge to shut down, and kills it if it has not exited after `graceMs`. */
  async dispose(graceMs = 2000): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.proc.once("exit", () => resolve()));
    this.session.request("shutdown").catch(() => undefined);
    const timer = setTimeout(() => this.proc.kill(), graceMs);
    await gone;
    clearTimeout(timer);
  }
}

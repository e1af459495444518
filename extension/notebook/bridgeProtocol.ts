// The `ascend-lens kernel bridge` protocol (docs/kernel.md), client side: newline-delimited JSON on
// stdio. Requests carry an "id"; every message about a request echoes it. Pure (no `vscode`, no processes)
// so the message handling is unit-tested; bridgeClient.ts connects it to the child process.

export type RequestType = "execute" | "interrupt" | "restart" | "shutdown" | "state";

export interface Request {
  id: string;
  type: RequestType;
  code?: string;
}

/** A rich output: a MIME bundle as Jupyter sends it (`display_data` / `execute_result`). */
export interface MimeOutput {
  kind: "display";
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** execute_result carries the prompt number. */
  executionCount?: number;
}
export interface StreamOutput {
  kind: "stream";
  name: "stdout" | "stderr";
  text: string;
}
export interface ErrorOutput {
  kind: "error";
  ename: string;
  evalue: string;
  traceback: string[];
}
export interface ClearOutput {
  kind: "clear";
  wait: boolean;
}
export type CellOutput = MimeOutput | StreamOutput | ErrorOutput | ClearOutput;

export interface Reply {
  status: "ok" | "error" | "aborted";
  executionCount?: number;
  /** Extra fields of the reply, e.g. an error message for a failed restart. */
  message?: string;
}

/** Messages the bridge sends that belong to no request. */
export type Notice =
  | { kind: "ready"; info: Record<string, unknown> }
  | { kind: "state"; state: Record<string, unknown> }
  | { kind: "died"; exitCode: number | null }
  | { kind: "failure"; message: string };

/** Splits a byte stream into lines; partial lines wait for the rest. */
export class LineDecoder {
  private buffer = "";

  push(chunk: string): string[] {
    this.buffer += chunk;
    const parts = this.buffer.split("\n");
    this.buffer = parts.pop() ?? "";
    return parts.map((l) => l.replace(/\r$/, "")).filter((l) => l.trim() !== "");
  }

  /** Whatever is left when the stream ends (a last line without a newline). */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = "";
    return rest ? [rest] : [];
  }
}

export function encodeRequest(req: Request): string {
  return JSON.stringify(req) + "\n";
}

/** One decoded bridge message, classified. Unknown or malformed input becomes `invalid`, never a throw. */
export type Decoded =
  | { to: string; output: CellOutput }
  | { to: string; reply: Reply }
  | { notice: Notice }
  | { invalid: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const strOr = (v: unknown, d: string): string => (typeof v === "string" ? v : d);
const optInt = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) ? v : undefined);

// Jupyter allows multi-line strings as arrays of lines; VS Code wants one string.
function joinLines(v: unknown): string {
  return Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join("") : strOr(v, "");
}

/** An nbformat-style output dict (`output_type` stream | display_data | execute_result | error). */
export function decodeOutput(o: Obj): CellOutput | string {
  switch (o.output_type) {
    case "stream":
      return { kind: "stream", name: o.name === "stderr" ? "stderr" : "stdout", text: joinLines(o.text) };
    case "display_data":
    case "update_display_data":
    case "execute_result": {
      if (!isObj(o.data)) return `${o.output_type} without a "data" bundle`;
      const data: Record<string, unknown> = {};
      for (const [mime, value] of Object.entries(o.data)) data[mime] = isJsonMime(mime) ? value : joinLines(value);
      const out: MimeOutput = { kind: "display", data, metadata: isObj(o.metadata) ? o.metadata : {} };
      const count = optInt(o.execution_count);
      if (count !== undefined) out.executionCount = count;
      return out;
    }
    case "error":
      return {
        kind: "error",
        ename: strOr(o.ename, "Error"),
        evalue: strOr(o.evalue, ""),
        traceback: Array.isArray(o.traceback) ? o.traceback.map((t) => (typeof t === "string" ? t : JSON.stringify(t))) : [],
      };
    default:
      return `unknown output_type ${JSON.stringify(o.output_type)}`;
  }
}

/**
 * Classifies one line from `ascend-lens kernel bridge` (docs/kernel.md): `ready`, `output`,
 * `clear_output`, `reply`, `error` (a refused request, or with a null id a bridge-level failure),
 * `died`, and `state` (the `ascend-lens.state` document, when the bridge forwards it).
 */
export function decodeMessage(line: string): Decoded {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return { invalid: `not JSON: ${line.slice(0, 200)}` };
  }
  if (!isObj(msg) || typeof msg.type !== "string") return { invalid: `no "type": ${line.slice(0, 200)}` };
  const id = typeof msg.id === "string" || typeof msg.id === "number" ? String(msg.id) : undefined;
  const needId = (d: Decoded): Decoded => (id === undefined ? { invalid: `"${String(msg.type)}" without "id"` } : d);

  switch (msg.type) {
    case "output": {
      if (!isObj(msg.output)) return { invalid: `"output" without an "output" object` };
      const output = decodeOutput(msg.output);
      return typeof output === "string" ? { invalid: output } : needId({ to: id ?? "", output });
    }
    case "clear_output":
      return needId({ to: id ?? "", output: { kind: "clear", wait: msg.wait === true } });
    case "reply": {
      const status = msg.status === "error" || msg.status === "aborted" ? msg.status : "ok";
      const reply: Reply = { status };
      const count = optInt(msg.execution_count);
      if (count !== undefined) reply.executionCount = count;
      if (typeof msg.reason === "string") reply.message = msg.reason;
      return needId({ to: id ?? "", reply });
    }
    case "error": {
      const message = strOr(msg.message, "unknown bridge error");
      // A refused request is answered with an error carrying its id: fail that request.
      if (id !== undefined) return { to: id, reply: { status: "error", message } };
      return { notice: { kind: "failure", message } };
    }
    case "ready":
      return { notice: { kind: "ready", info: msg } };
    case "died":
      return { notice: { kind: "died", exitCode: optInt(msg.exit_code) ?? null } };
    case "state": {
      const state = isObj(msg.state) ? msg.state : isObj(msg.data) ? msg.data : undefined;
      return state ? { notice: { kind: "state", state } } : { invalid: `"state" without a state object` };
    }
    default:
      return { invalid: `unknown message type "${msg.type}"` };
  }
}

function isJsonMime(mime: string): boolean {
  return mime === "application/json" || mime.endsWith("+json");
}

export interface ExecutionSink {
  output(o: CellOutput): void;
}

/**
 * Tracks requests in flight and routes each decoded message to the request it answers.
 * `send` writes one encoded request; ids are generated here so replies can never be confused.
 */
export class BridgeSession {
  private nextId = 1;
  private readonly pending = new Map<string, { sink?: ExecutionSink; resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private closedWith: Error | undefined;

  constructor(
    private readonly send: (line: string) => void,
    private readonly onNotice: (n: Notice) => void = () => undefined,
    private readonly onInvalid: (why: string) => void = () => undefined,
  ) {}

  get inFlight(): number {
    return this.pending.size;
  }

  request(type: RequestType, extra: { code?: string } = {}, sink?: ExecutionSink): Promise<Reply> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = `r${this.nextId++}`;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { sink, resolve, reject });
      try {
        this.send(encodeRequest({ id, type, ...extra }));
      } catch (err) {
        this.pending.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  execute(code: string, sink: ExecutionSink): Promise<Reply> {
    return this.request("execute", { code }, sink);
  }

  /** Feeds one line from the bridge's stdout. */
  receive(line: string): void {
    const d = decodeMessage(line);
    if ("invalid" in d) return this.onInvalid(d.invalid);
    if ("notice" in d) return this.onNotice(d.notice);
    const entry = this.pending.get(d.to);
    if (!entry) return this.onInvalid(`message for unknown request "${d.to}"`);
    if ("output" in d) {
      entry.sink?.output(d.output);
      return;
    }
    this.pending.delete(d.to);
    entry.resolve(d.reply);
  }

  /** The process ended: every request still waiting fails with `reason`; later requests too. */
  close(reason: Error): void {
    this.closedWith = reason;
    for (const [, entry] of this.pending) entry.reject(reason);
    this.pending.clear();
  }
}

// The `ascend-lens kernel bridge` protocol, client side: newline-delimited JSON on stdio.
// Requests carry an "id"; every message about a request echoes it. Pure (no `vscode`, no processes)
// so the message handling is unit-tested; bridgeClient.ts connects it to the child process.

export type RequestType = "execute" | "interrupt" | "restart" | "shutdown";

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
  | { kind: "status"; state: string }
  | { kind: "log"; text: string };

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

// Jupyter allows multi-line MIME strings as arrays of lines; VS Code wants one string.
function joinLines(v: unknown): string {
  return Array.isArray(v) ? v.map(String).join("") : strOr(v, "");
}

export function decodeMessage(line: string): Decoded {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return { invalid: `not JSON: ${line.slice(0, 200)}` };
  }
  if (!isObj(msg) || typeof msg.type !== "string") return { invalid: `no "type": ${line.slice(0, 200)}` };
  const id = typeof msg.id === "string" || typeof msg.id === "number" ? String(msg.id) : undefined;
  const content = isObj(msg.content) ? msg.content : msg;
  const needId = (d: Decoded): Decoded => (id === undefined ? { invalid: `"${String(msg.type)}" without "id"` } : d);

  switch (msg.type) {
    case "stream": {
      const name = content.name === "stderr" ? "stderr" : "stdout";
      return needId({ to: id ?? "", output: { kind: "stream", name, text: joinLines(content.text) } });
    }
    case "display_data":
    case "update_display_data":
    case "execute_result": {
      if (!isObj(content.data)) return { invalid: `${msg.type} without a "data" bundle` };
      const data: Record<string, unknown> = {};
      for (const [mime, value] of Object.entries(content.data)) {
        data[mime] = typeof value === "string" || Array.isArray(value) ? (isJsonMime(mime) ? value : joinLines(value)) : value;
      }
      const output: MimeOutput = { kind: "display", data, metadata: isObj(content.metadata) ? content.metadata : {} };
      const count = optInt(content.execution_count);
      if (count !== undefined) output.executionCount = count;
      return needId({ to: id ?? "", output });
    }
    case "error":
      return needId({
        to: id ?? "",
        output: {
          kind: "error",
          ename: strOr(content.ename, "Error"),
          evalue: strOr(content.evalue, ""),
          traceback: Array.isArray(content.traceback) ? content.traceback.map(String) : [],
        },
      });
    case "clear_output":
      return needId({ to: id ?? "", output: { kind: "clear", wait: content.wait === true } });
    case "reply":
    case "execute_reply":
    case "done": {
      const status = content.status === "error" || content.status === "aborted" ? content.status : "ok";
      const reply: Reply = { status };
      const count = optInt(content.execution_count);
      if (count !== undefined) reply.executionCount = count;
      if (typeof content.message === "string") reply.message = content.message;
      else if (typeof content.evalue === "string") reply.message = content.evalue;
      return needId({ to: id ?? "", reply });
    }
    case "ready":
      return { notice: { kind: "ready", info: content } };
    case "status":
      return { notice: { kind: "status", state: strOr(content.execution_state ?? content.state, "unknown") } };
    case "comm":
    case "state": {
      // The `ascend-lens.state` comm's payload: {"type": "state", "state": {...}} or the state itself.
      const data = isObj(content.data) ? content.data : content;
      const state = isObj(data.state) ? data.state : data;
      return { notice: { kind: "state", state } };
    }
    case "log":
      return { notice: { kind: "log", text: strOr(content.text ?? content.message, "") } };
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

// The per-line profile (`ascend-lens.profile/1`, docs/profile-format.md): types and a validating parser.
// Pure: no `vscode` import, so node tests load it directly.

export const PROFILE_SCHEMA = "ascend-lens.profile/1";
export const PROFILE_MIME = "application/vnd.ascend-lens.profile+json";

export interface OpStat {
  op_type: string;
  count: number;
  total_us: number;
  bound: string;
  /** Present on the run-wide `top_ops` only. */
  share?: number;
}

export interface LineStat {
  file: string;
  /** 1-based, as in the schema. */
  line: number;
  op_count: number;
  total_us: number;
  share: number;
  bound: string;
  top_ops: OpStat[];
}

export interface Profile {
  schema: typeof PROFILE_SCHEMA;
  device: string;
  total_us: number;
  op_count: number;
  trace: string | null;
  lines: LineStat[];
  top_ops: OpStat[];
}

/** Raised for a document that is not a valid `ascend-lens.profile/1`; the message names the field. */
export class ProfileFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProfileFormatError";
  }
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(o: Obj, key: string, where: string, opts: { int?: boolean; min?: number } = {}): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new ProfileFormatError(`${where}.${key}: expected a number, got ${describe(v)}`);
  }
  if (opts.int && !Number.isInteger(v)) throw new ProfileFormatError(`${where}.${key}: expected an integer, got ${v}`);
  if (opts.min !== undefined && v < opts.min) {
    throw new ProfileFormatError(`${where}.${key}: expected >= ${opts.min}, got ${v}`);
  }
  return v;
}

function str(o: Obj, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== "string") throw new ProfileFormatError(`${where}.${key}: expected a string, got ${describe(v)}`);
  return v;
}

function arr(o: Obj, key: string, where: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) throw new ProfileFormatError(`${where}.${key}: expected an array, got ${describe(v)}`);
  return v;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "string" ? JSON.stringify(v) : typeof v;
}

function parseOp(v: unknown, where: string, withShare: boolean): OpStat {
  if (!isObj(v)) throw new ProfileFormatError(`${where}: expected an object, got ${describe(v)}`);
  const op: OpStat = {
    op_type: str(v, "op_type", where),
    count: num(v, "count", where, { int: true, min: 0 }),
    total_us: num(v, "total_us", where, { min: 0 }),
    bound: str(v, "bound", where),
  };
  if (withShare) op.share = num(v, "share", where, { min: 0 });
  return op;
}

function parseLine(v: unknown, where: string): LineStat {
  if (!isObj(v)) throw new ProfileFormatError(`${where}: expected an object, got ${describe(v)}`);
  return {
    file: str(v, "file", where),
    line: num(v, "line", where, { int: true, min: 1 }),
    op_count: num(v, "op_count", where, { int: true, min: 0 }),
    total_us: num(v, "total_us", where, { min: 0 }),
    share: num(v, "share", where, { min: 0 }),
    bound: str(v, "bound", where),
    top_ops: arr(v, "top_ops", where).map((op, i) => parseOp(op, `${where}.top_ops[${i}]`, false)),
  };
}

/** Validates `value` (already JSON-decoded) as an `ascend-lens.profile/1` document. */
export function parseProfile(value: unknown): Profile {
  if (!isObj(value)) throw new ProfileFormatError(`profile: expected a JSON object, got ${describe(value)}`);
  if (value.schema !== PROFILE_SCHEMA) {
    throw new ProfileFormatError(
      `profile.schema: expected "${PROFILE_SCHEMA}", got ${describe(value.schema)}`,
    );
  }
  const trace = value.trace;
  if (trace !== null && trace !== undefined && typeof trace !== "string") {
    throw new ProfileFormatError(`profile.trace: expected a string or null, got ${describe(trace)}`);
  }
  return {
    schema: PROFILE_SCHEMA,
    device: str(value, "device", "profile"),
    total_us: num(value, "total_us", "profile", { min: 0 }),
    op_count: num(value, "op_count", "profile", { int: true, min: 0 }),
    trace: typeof trace === "string" ? trace : null,
    lines: arr(value, "lines", "profile").map((l, i) => parseLine(l, `profile.lines[${i}]`)),
    top_ops: arr(value, "top_ops", "profile").map((op, i) => parseOp(op, `profile.top_ops[${i}]`, true)),
  };
}

/** Parses JSON text as a profile; JSON syntax errors become ProfileFormatError too. */
export function parseProfileText(text: string): Profile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ProfileFormatError(`profile: not valid JSON (${(err as Error).message})`);
  }
  return parseProfile(value);
}

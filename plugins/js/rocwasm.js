// rocwasm.js: a thin JS layer over the `rocwasm:plugin@0.3.2` WIT bindings.
//
// A batch arrives as one packed buffer of columns (a Uint8Array); the
// `Batch` the plugin's deliverBatch receives reads its header once and
// gives each table as a property (`batch.kernelDispatches`) whose columns
// are typed arrays *over the buffer* (`.start` is a BigUint64Array, u32
// columns are Uint32Arrays; WIT names in camelCase): nothing is copied.
// Every u64 is a BigInt. This module lets plugin code read rows and
// columns and write tables, with the same shape as the Rust SDK
// (plugins/sdk) and the Python package (plugins/python/rocwasm):
//
// - Batch, rows(table) / columns(table, "start", "end") / rowCount /
//   select / receiveOnly;
// - bufferKind("MEMORY_COPY"), bufferOperationName(kind, op), … : kinds
//   and operations by name, asked of the host once and cached;
// - Table: a summary table for `fini` and its CSV;
// - info/warn/error/debug, configGet, writeFile, writeResult;
// - exportAnalysis(plugin): the `lifecycle` and `analysis` export objects,
//   with a default for every function the plugin does not define;
//   exportMergeableAnalysis(plugin) adds `merge` (takePartial → Uint8Array,
//   mergePartial(bytes)), for the world `mergeable-analysis-plugin`.
//
// Numbers: u64 cells are BigInts. Keep sums of bytes and nanoseconds in
// BigInt (exact); convert with Number(x) only for ratios.
//
// Errors: `throw new PluginError("sentence")` in `init` and the host
// disables the stage with that sentence; any other exception that escapes
// an export traps the instance (the stage's `on_failure` policy applies).

import * as hostLog from "rocwasm:plugin/log@0.3.2";
import * as hostConfig from "rocwasm:plugin/config@0.3.2";
import * as hostOutput from "rocwasm:plugin/output@0.3.2";
import * as hostNames from "rocwasm:plugin/names@0.3.2";
import * as hostDelivery from "rocwasm:plugin/delivery@0.3.2";

import { TABLES } from "./rocwasm_schema.js";

// ---------------------------------------------------------------- batch

const camel = (wit) => wit.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
const MAGIC = [0x52, 0x57, 0x42, 0x33]; // "RWB3"
const FORMAT = 1;
const HEADER = 8;
const ENTRY = 16;
/** "table.column" ids → [table property, column property, width]. */
const BY_ID = new Map();
for (const t of TABLES) {
  for (const c of t.columns) BY_ID.set(`${t.id}.${c.id}`, [camel(t.wit), camel(c.wit), c.width]);
}

const empty = (width) => (width === 8 ? new BigUint64Array(0) : new Uint32Array(0));

/** A packed batch, read in place: one property per table (`kernelDispatches`,
 *  `apiCalls`, …), each an object of typed-array columns. A column the batch
 *  does not hold is an empty array; columns of tables or ids this module
 *  does not know (a newer host's) are counted in `unknownColumns`. */
export class Batch {
  constructor(bytes) {
    if (!(bytes instanceof Uint8Array)) bytes = new Uint8Array(bytes);
    // Typed arrays need their element alignment: copy a misaligned buffer.
    if (bytes.byteOffset % 8 !== 0) bytes = bytes.slice();
    if (bytes.length < HEADER || MAGIC.some((b, i) => bytes[i] !== b)) {
      throw new Error("not a packed rocwasm batch");
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint16(4, true) !== FORMAT) throw new Error("a packed batch of another format");
    const count = view.getUint16(6, true);
    this.unknownColumns = 0;
    for (const t of TABLES) {
      const table = {};
      for (const c of t.columns) table[camel(c.wit)] = empty(c.width);
      this[camel(t.wit)] = table;
    }
    for (let i = 0; i < count; i++) {
      const at = HEADER + i * ENTRY;
      if (at + ENTRY > bytes.length) throw new Error(`entry ${i} is past the end of the batch`);
      const id = `${view.getUint16(at, true)}.${view.getUint16(at + 2, true)}`;
      const width = view.getUint8(at + 4);
      const rows = view.getUint32(at + 8, true);
      const offset = view.getUint32(at + 12, true);
      if (offset % 8 !== 0 || offset + rows * width > bytes.length) {
        throw new Error(`column ${id} is past the end of the batch`);
      }
      const known = BY_ID.get(id);
      if (known === undefined || known[2] !== width) {
        this.unknownColumns += 1;
        continue;
      }
      const Array_ = width === 8 ? BigUint64Array : Uint32Array;
      this[known[0]][known[1]] = new Array_(bytes.buffer, bytes.byteOffset + offset, rows);
    }
  }
}

// ---------------------------------------------------------------- rows

/** Rows in `table`: its longest column (unselected columns arrive empty). */
export function rowCount(table) {
  let n = 0;
  for (const key of Object.keys(table)) n = Math.max(n, table[key].length);
  return n;
}

function column(table, name, n) {
  const col = table[name];
  if (col === undefined) throw new Error(`the table has no column \`${name}\``);
  return col.length === n ? col : null; // null: absent, reads as zero
}

/** For each row, the named columns' values as an array: the fast loop.
 *  `for (const [start, end] of columns(t, "start", "end"))`. */
export function* columns(table, ...names) {
  const n = rowCount(table);
  const cols = names.map((name) => column(table, name, n));
  const zero = cols.map((c, i) => (table[names[i]] instanceof BigUint64Array ? 0n : 0));
  for (let i = 0; i < n; i++) {
    yield cols.map((c, j) => (c === null ? zero[j] : c[i]));
  }
}

/** Row objects (a property per column, absent columns read as zero). */
export function* rows(table) {
  const n = rowCount(table);
  const names = Object.keys(table);
  const cols = names.map((name) => column(table, name, n));
  for (let i = 0; i < n; i++) {
    const row = {};
    names.forEach((name, j) => {
      const c = cols[j];
      row[name] = c === null ? (table[name] instanceof BigUint64Array ? 0n : 0) : c[i];
    });
    yield row;
  }
}

const kebab = (s) => s.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());

/** Column selection, in `configure` or `init`: the host then sends only
 *  these columns of `table`. Names in camelCase or as in WIT. */
export function select(table, ...names) {
  hostDelivery.selectColumns(kebab(table), names.map(kebab));
}

/** Receive no column of any table but `tables` (camelCase or WIT names),
 *  whose selection is left as it is; a table the host does not know (an
 *  older host) is skipped. */
export function receiveOnly(...tables) {
  const keep = new Set(tables.map(kebab));
  for (const t of TABLES) {
    if (keep.has(t.wit)) continue;
    try {
      hostDelivery.selectColumns(t.wit, []);
    } catch (e) {
      // A table an older host does not know cannot be sent anyway.
      if ((e?.payload ?? e) !== "invalid-argument") throw e;
    }
  }
}

// ---------------------------------------------------------------- names

let bufferKinds = null;
const opNames = new Map();

/** The buffer-tracing kind called `name` (`KERNEL_DISPATCH`, …), or undefined. */
export function bufferKind(name) {
  if (bufferKinds === null) {
    bufferKinds = new Map();
    for (const k of hostNames.bufferKinds()) {
      const n = hostNames.bufferKindName(k);
      if (n !== undefined) bufferKinds.set(n, k);
    }
  }
  return bufferKinds.get(name);
}

/** The name of buffer kind `kind`. */
export function bufferKindName(kind) {
  return hostNames.bufferKindName(kind) ?? "?";
}

/** The name of operation `op` of buffer kind `kind` (cached). */
export function bufferOperationName(kind, op) {
  const key = `${kind}:${op}`;
  if (!opNames.has(key)) opNames.set(key, hostNames.bufferOperationName(kind, op) ?? `op${op}`);
  return opNames.get(key);
}

// ---------------------------------------------------------------- tables

function csvCell(cell) {
  return /[",\n\r]/.test(cell) ? '"' + cell.replaceAll('"', '""') + '"' : cell;
}

/** A titled table of string cells: `fini` returns them, `csv()` files them. */
export class Table {
  constructor(title, columns) {
    this.title = String(title);
    this.columns = columns.map(String);
    this.rows = [];
  }

  /** Appends a row, one cell per column (converted with String). */
  row(...cells) {
    if (cells.length !== this.columns.length) {
      throw new Error(
        `table \`${this.title}\` has ${this.columns.length} columns, the row has ${cells.length}`,
      );
    }
    this.rows.push(cells.map(String));
  }

  /** The WIT `summary-table` record. */
  summary() {
    return { title: this.title, columns: this.columns, rows: this.rows };
  }

  /** Header and rows as CSV (RFC 4180 quoting). */
  csv() {
    const lines = [this.columns, ...this.rows].map((r) => r.map(csvCell).join(","));
    return lines.join("\n") + "\n";
  }
}

// ---------------------------------------------------------------- host

const log = (level) => (message) => hostLog.log(level, String(message));
export const debug = log("debug");
export const info = log("info");
export const warn = log("warn");
export const error = log("error");

/** An error `init` reports to the host as its `result` error string. */
export class PluginError extends Error {}

/** The stage config value of `key`, converted by `parse` (e.g. Number,
 *  BigInt), or `fallback`. A value `parse` rejects raises PluginError. */
export function configGet(key, fallback, parse = (s) => s.replace(/^"|"$/g, "")) {
  const raw = hostConfig.get(key);
  if (raw === undefined) return fallback;
  let value;
  try {
    value = parse(raw.trim());
  } catch {
    value = NaN;
  }
  if (typeof value === "number" && Number.isNaN(value)) {
    throw new PluginError(`config key \`${key}\` must be a number, not \`${raw}\``);
  }
  return value;
}

/** The host's answer to every output call of a stage the chain grants no
 *  output directory (WIT `output`): the chain wants no files from it. */
export const NOT_GRANTED = "no output directory is granted to this plugin";

let notGranted = false;

/** Writes `name`, a file holding what the plugin also returns as a summary
 *  table, as the stock plugins do; true when written. Without an output
 *  grant (the chain asked for the tables only) nothing is written and one
 *  info-level line per instance says so; any other refusal is a warning
 *  naming the file and the host's reason. */
export function writeResult(pluginName, name, data) {
  if (notGranted) return false;
  const err = writeFile(name, data);
  if (err === undefined) return true;
  if (err === NOT_GRANTED) {
    notGranted = true;
    info(`${pluginName}: ${name} not written: the chain grants no output directory (the table is in the summary)`);
  } else {
    warn(`${pluginName}: cannot write ${name}: ${err}`);
  }
  return false;
}

/** Creates or replaces `name` in the granted output directory; undefined on
 *  success, else the host's sentence (e.g. no directory granted). */
export function writeFile(name, data) {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  try {
    hostOutput.write(name, bytes);
  } catch (e) {
    return String(e?.payload ?? e);
  }
  return undefined;
}

// ---------------------------------------------------------------- exports

/** The `lifecycle` and `analysis` exports for `plugin`, an object with any
 *  of configure, init, deliverBatch, onCallback,
 *  onExternalCorrelationRequest, fini (defaults: accept, nothing, nothing,
 *  user data unchanged, no answer, no tables). `fini` may return Tables. */
export function exportAnalysis(plugin) {
  const call = (name, fallback) => (...args) =>
    typeof plugin[name] === "function" ? plugin[name](...args) : fallback(...args);
  const lifecycle = {
    configure: (info) => Boolean(call("configure", () => true)(info)),
    init: () => {
      try {
        call("init", () => {})();
      } catch (e) {
        if (e instanceof PluginError) throw e.message;
        throw e;
      }
    },
    fini: () =>
      (call("fini", () => [])() ?? []).map((t) => (t instanceof Table ? t.summary() : t)),
  };
  const analysis = {
    deliverBatch: (info, bytes) => call("deliverBatch", () => {})(info, new Batch(bytes)),
    onCallback: call("onCallback", (_record, userData) => userData),
    onExternalCorrelationRequest: call("onExternalCorrelationRequest", () => undefined),
  };
  return { lifecycle, analysis };
}

/** The `lifecycle`, `analysis` and `merge` exports (world
 *  `mergeable-analysis-plugin`, WIT 0.3.1) for `plugin`, which also has
 *  takePartial() → Uint8Array (its state, in place of fini) and
 *  mergePartial(bytes) (another instance's state folded in; throw a
 *  PluginError to refuse it). `rocwasm plugin test` checks that any split
 *  of a trace and any order of merges gives the tables of one pass. */
export function exportMergeableAnalysis(plugin) {
  const refusing = (f) => (...args) => {
    try {
      return f(...args);
    } catch (e) {
      if (e instanceof PluginError) throw e.message;
      throw e;
    }
  };
  return {
    ...exportAnalysis(plugin),
    merge: {
      takePartial: refusing(() => plugin.takePartial()),
      mergePartial: refusing((bytes) => plugin.mergePartial(bytes)),
    },
  };
}

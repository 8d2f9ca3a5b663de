// copy-histogram: memory copies by size, in power-of-two buckets.
//
// Every completed async memory copy (MEMORY_COPY records) falls in the
// bucket [2^k, 2^(k+1)) bytes that holds its size (a 0-byte copy in its own
// bucket "0 B"). Per bucket: the number of copies, their bytes, their time
// (sum of end - start, ns; 0 when end < start) and the bandwidth
// bytes / time in GB/s (10^9 bytes per second = bytes per ns; "-" when the
// time is 0), and the bucket's share of all bytes.
//
// Chain stage:
//
//   [[stage]]
//   name = "copy-sizes"
//   plugin = "target/plugins/copy-histogram.wasm"
//   domains = ["MEMORY_COPY"]
//   output = true                              # for the CSV
//   config = { file = "copy_histogram.csv" }   # "" = no file
//
// Summary table "Memory copies by size" with columns Bucket (e.g.
// "4 KiB"), MinBytes, MaxBytes (inclusive), Copies, Bytes, TimeNs, GB/s
// (two decimals), Percentage (of bytes, two decimals); smallest bucket
// first. Sums are exact (BigInt).

import * as rocwasm from "../rocwasm.js";

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/** The bucket of a size: -1 for 0 bytes, else floor(log2(bytes)). */
export function bucketOf(bytes) {
  return bytes === 0n ? -1 : bytes.toString(2).length - 1;
}

/** "0 B", "1 B", "2 B", …, "512 B", "1 KiB", "2 KiB", … */
export function bucketLabel(k) {
  if (k < 0) return "0 B";
  const unit = Math.min(Math.floor(k / 10), UNITS.length - 1);
  return `${2n ** BigInt(k - unit * 10)} ${UNITS[unit]}`;
}

/** 100 * part / whole with two decimals, exact for BigInts. */
function percent(part, whole) {
  if (whole === 0n) return "0.00";
  return ratio2(100n * part, whole);
}

/** a / b rounded half up to two decimals, from BigInts. */
function ratio2(a, b) {
  const hundredths = (a * 100n * 2n + b) / (2n * b);
  const frac = (hundredths % 100n).toString().padStart(2, "0");
  return `${hundredths / 100n}.${frac}`;
}

const plugin = {
  buckets: new Map(), // k -> { copies, bytes, ns }
  file: "copy_histogram.csv",

  init() {
    this.file = rocwasm.configGet("file", "copy_histogram.csv");
    rocwasm.select("memoryCopies", "start", "end", "bytes");
    rocwasm.receiveOnly("memoryCopies");
  },

  deliverBatch(_info, batch) {
    for (const [start, end, bytes] of rocwasm.columns(batch.memoryCopies, "start", "end", "bytes")) {
      const k = bucketOf(bytes);
      let b = this.buckets.get(k);
      if (b === undefined) {
        b = { copies: 0n, bytes: 0n, ns: 0n };
        this.buckets.set(k, b);
      }
      b.copies += 1n;
      b.bytes += bytes;
      b.ns += end > start ? end - start : 0n;
    }
  },

  fini() {
    const table = new rocwasm.Table("Memory copies by size", [
      "Bucket", "MinBytes", "MaxBytes", "Copies", "Bytes", "TimeNs", "GB/s", "Percentage",
    ]);
    let total = 0n;
    for (const b of this.buckets.values()) total += b.bytes;
    for (const k of [...this.buckets.keys()].sort((a, b) => a - b)) {
      const b = this.buckets.get(k);
      const min = k < 0 ? 0n : 2n ** BigInt(k);
      const max = k < 0 ? 0n : 2n ** BigInt(k + 1) - 1n;
      const gbs = b.ns === 0n ? "-" : ratio2(b.bytes, b.ns);
      table.row(bucketLabel(k), min, max, b.copies, b.bytes, b.ns, gbs, percent(b.bytes, total));
    }
    if (this.file) rocwasm.writeResult("copy-histogram", this.file, table.csv());
    return [table];
  },
};

export const { lifecycle, analysis } = rocwasm.exportAnalysis(plugin);

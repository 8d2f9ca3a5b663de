// {{name}}: how many kernel dispatches, and their total GPU time.
//
// Returns one summary table, "Kernel dispatches" (columns Dispatches,
// TotalNs: the sum of end - start, 0 for a reversed record). Only `start`
// and `end` are read, so `init` asks the host for just those columns of
// kernel dispatches and for no other table.
// Numbers are BigInts (WIT u64).
//
// `rocwasm.js` is the thin layer over the generated bindings (rows,
// columns, tables, config, output); `wit/` is the contract. See README.md.

import * as rocwasm from "./rocwasm.js";

const plugin = {
  dispatches: 0n,
  totalNs: 0n,

  init() {
    rocwasm.select("kernelDispatches", "start", "end");
    rocwasm.receiveOnly("kernelDispatches");
  },

  deliverBatch(_info, batch) {
    for (const [start, end] of rocwasm.columns(batch.kernelDispatches, "start", "end")) {
      this.dispatches += 1n;
      if (end > start) this.totalNs += end - start;
    }
  },

  fini() {
    const table = new rocwasm.Table("Kernel dispatches", ["Dispatches", "TotalNs"]);
    table.row(this.dispatches, this.totalNs);
    return [table];
  },
};

export const { lifecycle, analysis } = rocwasm.exportAnalysis(plugin);

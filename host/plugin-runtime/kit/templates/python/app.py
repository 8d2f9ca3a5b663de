"""{{name}}: how many kernel dispatches, and their total GPU time.

Returns one summary table, "Kernel dispatches" (columns Dispatches,
TotalNs: the sum of end - start, 0 for a reversed record). Only `start`
and `end` are read, so `init` asks the host for just those columns of
kernel dispatches and for no other table.

Its results merge (world `mergeable-analysis-plugin`): a run over many
processes adds the instances' counts (`take_partial`, `merge_partial`),
and `rocwasm plugin test` checks that any split gives one pass's table.

`rocwasm/` is the thin layer over the generated bindings (rows, columns,
tables, config, output); `wit/` is the contract. See README.md.
"""

import json

import rocwasm


class Plugin(rocwasm.AnalysisPlugin):
    def __init__(self):
        self.dispatches = 0
        self.total_ns = 0

    def init(self):
        rocwasm.select("kernel_dispatches", "start", "end")
        rocwasm.receive_only("kernel_dispatches")

    def deliver_batch(self, info, batch):
        for start, end in rocwasm.columns(batch.kernel_dispatches, "start", "end"):
            self.dispatches += 1
            if end > start:
                self.total_ns += end - start

    def fini(self):
        table = rocwasm.Table("Kernel dispatches", ["Dispatches", "TotalNs"])
        table.row(self.dispatches, self.total_ns)
        return [table]

    def take_partial(self):
        return json.dumps([self.dispatches, self.total_ns]).encode()

    def merge_partial(self, data):
        try:
            dispatches, total_ns = json.loads(data)
        except ValueError as e:
            raise rocwasm.PluginError(f"not a partial result of {{name}}: {e}")
        self.dispatches += dispatches
        self.total_ns += total_ns


Lifecycle, Analysis, Merge = rocwasm.export_mergeable_analysis(Plugin)

"""range-kernel-time: GPU kernel time per roctx range.

Which roctx push/pop range spends how much GPU time: every kernel dispatch
is attributed to the innermost range open on its launching thread when it
was launched (the rule and its details: `attribution.py`).

Chain stage::

    [[stage]]
    name = "ranges"
    plugin = "target/plugins/range-kernel-time.wasm"
    domains = ["KERNEL_DISPATCH", "MARKER_CORE_API"]
    output = true                       # for the CSV
    config = { file = "range_kernel_time.csv" }   # "" = no file

Without `domains` it traces both kinds on a context of its own.

Summary table "Kernel time per roctx range", one row per range path,
outermost first (children follow their parent), then `(no range)`:

| column | meaning |
|---|---|
| Range | `outer > inner`; `range@<push correlation id>` when no message is known |
| Instances | pushes of this path |
| Kernels | dispatches whose innermost range is this one |
| SelfNs | their GPU time (sum of `end - start`) |
| TotalNs | SelfNs plus that of every range nested in it |
| Percentage | 100 * TotalNs / all dispatches' GPU time, two decimals |

The same table goes to `config.file` when the stage has an output grant.
Range names: in a live run the plugin follows `roctxRangePushA` callbacks
on the chain's context to learn each push's message; in a replay (or when
another stage owns those callbacks) ranges are named by correlation id.
"""

import rocwasm
from attribution import NO_RANGE, SEP, Attribution
from wit_world.imports import profiler
from wit_world.imports.types import BufferPolicy, CallbackPayload_Api, Phase


class RangeKernelTime(rocwasm.AnalysisPlugin):
    def __init__(self):
        self.data = Attribution()
        self.chain_context = None
        self.domains = []
        self.file = "range_kernel_time.csv"

    def configure(self, info):
        self.chain_context = info.chain_context
        self.domains = list(info.domains)
        return True

    def init(self):
        self.file = rocwasm.config_get("file", "range_kernel_time.csv")
        self.marker = rocwasm.buffer_kind("MARKER_CORE_API")
        self.dispatch = rocwasm.buffer_kind("KERNEL_DISPATCH")
        if self.marker is None or self.dispatch is None:
            raise rocwasm.PluginError("the host names no MARKER_CORE_API or KERNEL_DISPATCH kind")
        self.push_op = rocwasm.buffer_operation(self.marker, "roctxRangePushA")
        self.pop_op = rocwasm.buffer_operation(self.marker, "roctxRangePop")
        if self.push_op is None or self.pop_op is None:
            raise rocwasm.PluginError("the host names no roctxRangePushA/roctxRangePop operations")
        rocwasm.select("api_calls", "kind", "operation", "correlation_id", "thread_id")
        rocwasm.select("kernel_dispatches", "correlation_id", "thread_id", "start", "end")
        rocwasm.receive_only("api_calls", "kernel_dispatches")
        if not self.domains:
            self._trace_on_own_context()
        self._follow_messages()

    def _trace_on_own_context(self):
        ctx = profiler.create_context()
        buf = profiler.create_buffer(ctx, 1 << 20, 1 << 19, BufferPolicy.LOSSLESS)
        for kind in (self.marker, self.dispatch):
            profiler.configure_buffer_tracing(ctx, kind, [], buf)
        profiler.start_context(ctx)
        self.own_context = ctx

    def _follow_messages(self):
        """Range names from `roctxRangePushA` callbacks, where allowed."""
        kind = rocwasm.callback_kind("MARKER_CORE_API")
        ctx = self.chain_context if self.chain_context is not None else getattr(self, "own_context", None)
        op = rocwasm.callback_operation(kind, "roctxRangePushA") if kind is not None else None
        if ctx is None or op is None:
            return
        try:
            profiler.configure_callback_tracing(ctx, kind, [op])
            self.callback_kind = kind
        except Exception as e:  # e.g. another stage owns marker callbacks
            rocwasm.info(f"range-kernel-time: ranges named by correlation id ({e!r})")

    def on_callback(self, record, user_data):
        if record.phase == Phase.ENTER and isinstance(record.payload, CallbackPayload_Api):
            args = record.payload.value.args
            arg = next((a for a in args if a.name == "message"), args[0] if args else None)
            if arg is not None:
                self.data.messages[record.correlation.internal] = arg.value.strip().strip('"')
        return user_data

    def deliver_batch(self, info, batch):
        marker, push, pop = self.marker, self.push_op, self.pop_op
        data = self.data
        for kind, op, corr, thread in rocwasm.columns(
            batch.api_calls, "kind", "operation", "correlation_id", "thread_id"
        ):
            if kind == marker:
                if op == push:
                    data.push(thread, corr)
                elif op == pop:
                    data.pop(thread, corr)
        for corr, thread, start, end in rocwasm.columns(
            batch.kernel_dispatches, "correlation_id", "thread_id", "start", "end"
        ):
            data.dispatch(thread, corr, start, end)

    def fini(self):
        paths, unmatched = self.data.report()
        gpu_total = sum(r[2] for r in paths.values())
        title = "Kernel time per roctx range"
        if unmatched:
            title += f" ({unmatched} roctxRangePop without an open range ignored)"
        table = rocwasm.Table(
            title, ["Range", "Instances", "Kernels", "SelfNs", "TotalNs", "Percentage"]
        )
        order = sorted((p for p in paths if p), key=list) + ([()] if () in paths else [])
        for path in order:
            instances, kernels, self_ns, total_ns = paths[path]
            pct = 100.0 * total_ns / gpu_total if gpu_total else 0.0
            name = SEP.join(path) if path else NO_RANGE
            table.row(name, instances, kernels, self_ns, total_ns, f"{pct:.2f}")
        if self.file:
            rocwasm.write_result("range-kernel-time", self.file, table.csv())
        return [table]


Lifecycle, Analysis = rocwasm.export_analysis(RangeKernelTime)

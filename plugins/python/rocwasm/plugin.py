"""The plugin life cycle: a base class with defaults, and the export glue.

componentize-py looks in the app module for one class per exported WIT
interface -- `Lifecycle` (configure, init, fini) and `Analysis`
(deliver_batch, on_callback, on_external_correlation_request) -- and makes
one instance of each. A plugin's state lives in one object, so
`export_analysis(MyPlugin)` returns two thin classes that forward to a
single `MyPlugin()` made on first use::

    class MyPlugin(rocwasm.AnalysisPlugin):
        def deliver_batch(self, info, batch): ...
        def fini(self): return [table.summary()]

    Lifecycle, Analysis = rocwasm.export_analysis(MyPlugin)

Results that merge (WIT 0.3.1's `merge`, world
`mergeable-analysis-plugin` in `rocwasm-plugin.toml`): implement
`take_partial()` (your state as `bytes`, in place of `fini`) and
`merge_partial(data)` (fold another instance's bytes in) and export with
`export_mergeable_analysis`, which adds the `Merge` class::

    Lifecycle, Analysis, Merge = rocwasm.export_mergeable_analysis(MyPlugin)

`rocwasm plugin test` checks that any split of a trace and any order of
merges gives the tables of one pass.

Errors: raise `PluginError("sentence")` in `init` and the host disables
the stage and reports the sentence. Any other exception that escapes an
export traps the instance: the stage's `on_failure` policy applies.
"""

from componentize_py_types import Err

from .rows import Batch


class PluginError(Exception):
    """An error `init` reports to the host as its `result` error string."""


class AnalysisPlugin:
    """Every export with a default; override what the analysis needs."""

    def configure(self, info):
        """`info` is a `ToolInfo`; return False to decline. Default: accept."""
        self.tool_info = info
        return True

    def init(self):
        """Configure services here (they lock afterwards). Default: nothing."""

    def deliver_batch(self, info, batch):
        """A `rocwasm.Batch` (columns read in place); read it with
        `rocwasm.rows` / `rocwasm.columns`."""

    def on_callback(self, record, user_data):
        """A callback record; the value returned at ENTER comes back at EXIT."""
        return user_data

    def on_external_correlation_request(self, request):
        """Return an int to set the external correlation id, None to pass."""
        return None

    def fini(self):
        """Return a list of summary tables (`Table.summary()`)."""
        return []


def _exports(plugin_class):
    """One instance of `plugin_class`, made on first use, and the
    `Lifecycle` and `Analysis` classes forwarding to it."""
    holder = []

    def instance():
        if not holder:
            holder.append(plugin_class())
        return holder[0]

    class Lifecycle:
        def configure(self, info):
            return bool(instance().configure(info))

        def init(self):
            try:
                instance().init()
            except PluginError as e:
                raise Err(str(e))

        def fini(self):
            return [t.summary() if hasattr(t, "summary") else t for t in instance().fini()]

    class Analysis:
        def deliver_batch(self, info, batch):
            instance().deliver_batch(info, Batch(batch))

        def on_callback(self, record, user_data):
            return int(instance().on_callback(record, user_data)) & 0xFFFFFFFFFFFFFFFF

        def on_external_correlation_request(self, request):
            return instance().on_external_correlation_request(request)

    return instance, Lifecycle, Analysis


def export_analysis(plugin_class):
    """The `(Lifecycle, Analysis)` classes componentize-py exports, both
    forwarding to one instance of `plugin_class`."""
    _, Lifecycle, Analysis = _exports(plugin_class)
    return Lifecycle, Analysis


def export_mergeable_analysis(plugin_class):
    """The `(Lifecycle, Analysis, Merge)` classes componentize-py exports for
    the world `mergeable-analysis-plugin`, all forwarding to one instance of
    `plugin_class`, which implements `take_partial() -> bytes` and
    `merge_partial(data: bytes)` (raise `PluginError` to refuse a partial)."""
    instance, Lifecycle, Analysis = _exports(plugin_class)

    class Merge:
        def take_partial(self):
            try:
                return bytes(instance().take_partial())
            except PluginError as e:
                raise Err(str(e))

        def merge_partial(self, partial):
            try:
                instance().merge_partial(bytes(partial))
            except PluginError as e:
                raise Err(str(e))

    return Lifecycle, Analysis, Merge

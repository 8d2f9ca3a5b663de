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


def export_analysis(plugin_class):
    """The `(Lifecycle, Analysis)` classes componentize-py exports, both
    forwarding to one instance of `plugin_class`."""
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

    return Lifecycle, Analysis

"""rocwasm: a thin Python layer over the `rocwasm:plugin` WIT bindings.

componentize-py turns the WIT world (`rocwasm:plugin@0.3.2`) into a
generated package, `wit_world`, whose batches are packed buffers of
columns (`bytes`) and whose host calls raise `componentize_py_types.Err`.
This package lets plugin code read rows and columns and write tables
instead:

- :mod:`rocwasm.plugin` -- `AnalysisPlugin` (a default for every export)
  and `export_analysis`, which makes the two classes componentize-py looks
  for (`Lifecycle`, `Analysis`) share one instance of your plugin
  (`export_mergeable_analysis` adds `Merge`, for results that merge);
- :mod:`rocwasm.rows` -- `Batch` (the packed buffer, each table an
  attribute whose columns are memoryviews into it), `rows(table)` (row
  objects with attributes), `columns(table, "start", "end")` (tuples, the
  fast loop), `row_count`, `select` and `receive_only` (the host sends only
  what you read); :mod:`rocwasm.schema` is the tables' ids, generated;
- :mod:`rocwasm.names` -- kinds and operations by name
  (`buffer_kind("MARKER_CORE_API")`), asked of the host once and cached, so
  no kind number is written in a plugin;
- :mod:`rocwasm.table` -- `Table`: a summary table for `fini` and its CSV;
- :mod:`rocwasm.host` -- logging, typed config values, output files.

The same shape as the Rust SDK (`plugins/sdk`) and the JS module
(`plugins/js/rocwasm.js`). See `plugins/python/README.md`.
"""

from .host import (
    NOT_GRANTED,
    config_get,
    config_entries,
    debug,
    error,
    info,
    warn,
    write_file,
    write_result,
)
from .names import (
    buffer_kind,
    buffer_kind_name,
    buffer_operation,
    buffer_operation_name,
    callback_kind,
    callback_operation,
)
from .plugin import AnalysisPlugin, PluginError, export_analysis, export_mergeable_analysis
from .rows import Batch, BatchError, columns, receive_only, row_count, rows, select
from .table import Table

__all__ = [
    "AnalysisPlugin",
    "Batch",
    "BatchError",
    "PluginError",
    "Table",
    "buffer_kind",
    "buffer_kind_name",
    "buffer_operation",
    "buffer_operation_name",
    "callback_kind",
    "callback_operation",
    "columns",
    "config_entries",
    "config_get",
    "debug",
    "error",
    "export_analysis",
    "export_mergeable_analysis",
    "info",
    "receive_only",
    "row_count",
    "rows",
    "select",
    "warn",
    "write_file",
    "write_result",
    "NOT_GRANTED",
]

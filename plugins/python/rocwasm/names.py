"""Kinds and operations by name, never by number.

Kind and operation numbers are ROCprofiler-SDK enum values that may change
between releases; names do not. Each lookup asks the host (`names`
interface) once and caches the answer for the run.
"""

from wit_world.imports import names as _names

_buffer_kinds = None
_callback_kinds = None
_buffer_ops = {}
_callback_ops = {}


def _kinds(listing, namer):
    return {namer(k): k for k in listing() if namer(k) is not None}


def buffer_kind(name):
    """The buffer-tracing kind called `name` (e.g. `KERNEL_DISPATCH`,
    `MARKER_CORE_API`, `MEMORY_COPY`), or None."""
    global _buffer_kinds
    if _buffer_kinds is None:
        _buffer_kinds = _kinds(_names.buffer_kinds, _names.buffer_kind_name)
    return _buffer_kinds.get(name)


def callback_kind(name):
    """The callback-tracing kind called `name`, or None."""
    global _callback_kinds
    if _callback_kinds is None:
        _callback_kinds = _kinds(_names.callback_kinds, _names.callback_kind_name)
    return _callback_kinds.get(name)


def buffer_kind_name(kind):
    """The name of buffer-tracing kind `kind` (`"?"` if unknown)."""
    return _names.buffer_kind_name(kind) or "?"


def buffer_operation_name(kind, op):
    """The name of operation `op` of buffer kind `kind`: the API function
    (`roctxRangePushA`), or, for markers replayed from rocprofv3, the
    message it recorded. Cached."""
    key = (kind, op)
    if key not in _buffer_ops:
        _buffer_ops[key] = _names.buffer_operation_name(kind, op) or f"op{op}"
    return _buffer_ops[key]


def buffer_operation(kind, name):
    """The operation of buffer kind `kind` called `name`, or None."""
    for op in _names.buffer_kind_operations(kind):
        if buffer_operation_name(kind, op) == name:
            return op
    return None


def callback_operation(kind, name):
    """The operation of callback kind `kind` called `name`, or None."""
    if kind not in _callback_ops:
        _callback_ops[kind] = {
            _names.callback_operation_name(kind, op): op
            for op in _names.callback_kind_operations(kind)
        }
    return _callback_ops[kind].get(name)

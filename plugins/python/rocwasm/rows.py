"""The batch, and rows and columns over it.

Under `rocwasm:plugin@0.3.2` a batch arrives as one packed buffer of
columns (`bytes`); `Batch` reads its header once and gives each table as
an attribute (`batch.kernel_dispatches`, `batch.api_calls`, ...): an
object with one attribute per column, named as in the WIT record with `_`
for `-` (`correlation_id`). A column is a `memoryview` of the buffer cast
to its integer type: reading it copies nothing. Columns the plugin did not
`select` are not in the buffer and read as empty; a table's row count is
the length of its longest column, and an absent column reads as 0 -- as in
the Rust SDK.

Two ways to loop:

- `for d in rows(batch.kernel_dispatches): d.end - d.start` -- row objects
  with an attribute per column (convenient, one object per row);
- `for start, end in columns(batch.kernel_dispatches, "start", "end"):` --
  plain tuples from `zip` (the fast loop: no object per row).
"""

import itertools
import struct

from componentize_py_types import Err
from wit_world.imports import delivery
from wit_world.imports.types import Status

from .schema import TABLES

_HEADER = struct.Struct("<4sHH")
_ENTRY = struct.Struct("<HHB3xII")
_MAGIC = b"RWB3"
_FORMAT = 1
# (table id, column id) -> (table field, column field, memoryview typecode)
_BY_ID = {
    (t_id, c_id): (t_field, c_field, code)
    for t_id, t_field, _t_wit, cols in TABLES
    for c_id, c_field, _c_wit, code in cols
}
_WIDTH = {"I": 4, "Q": 8}


class BatchError(ValueError):
    """The buffer is not a packed batch this SDK can read."""


class TableView:
    """One table of a batch: an attribute per column (a memoryview, or an
    empty tuple for a column the batch does not hold)."""

    def __init__(self, field, names):
        self._field = field
        self._names = names
        for name in names:
            setattr(self, name, ())

    def column_names(self):
        """The table's columns, in schema order."""
        return self._names

    def __len__(self):
        return max((len(getattr(self, n)) for n in self._names), default=0)

    def __repr__(self):
        return f"<{self._field}: {len(self)} rows>"


class Batch:
    """A packed batch (`deliver_batch`'s `batch` argument, read in place).

    Columns of tables or ids this SDK does not know (a newer host's) are
    skipped and counted in `unknown_columns`."""

    def __init__(self, data):
        view = memoryview(data)
        if len(view) < _HEADER.size:
            raise BatchError(f"a batch of {len(view)} bytes has no header")
        magic, fmt, count = _HEADER.unpack_from(view, 0)
        if magic != _MAGIC or fmt != _FORMAT:
            raise BatchError(f"not a packed batch of format {_FORMAT} ({magic!r}, {fmt})")
        self.unknown_columns = 0
        for _t_id, t_field, _t_wit, cols in TABLES:
            setattr(self, t_field, TableView(t_field, tuple(c[1] for c in cols)))
        for i in range(count):
            at = _HEADER.size + i * _ENTRY.size
            if at + _ENTRY.size > len(view):
                raise BatchError(f"entry {i} is past the end of the batch")
            table, column, width, rows, offset = _ENTRY.unpack_from(view, at)
            known = _BY_ID.get((table, column))
            end = offset + rows * width
            if end > len(view):
                raise BatchError(f"column {table}.{column} is past the end of the batch")
            if known is None or _WIDTH[known[2]] != width:
                self.unknown_columns += 1
                continue
            t_field, c_field, code = known
            setattr(getattr(self, t_field), c_field, view[offset:end].cast(code))

    def tables(self):
        """`(field, table)` of every table, in schema order."""
        return [(t[1], getattr(self, t[1])) for t in TABLES]

    def __len__(self):
        return sum(len(t) for _, t in self.tables())


def row_count(table):
    """Rows in `table`: the length of its longest column."""
    return len(table)

def _column(table, name, n):
    try:
        col = getattr(table, name)
    except AttributeError:
        raise KeyError(f"{type(table).__name__} has no column `{name}`") from None
    # An unselected column is empty: it reads as zeros.
    return col if len(col) == n else itertools.repeat(0, n)


def columns(table, *names):
    """Tuples of the named columns, row by row (`zip` of the columns)."""
    n = row_count(table)
    if len(names) == 1:
        return iter(_column(table, names[0], n))
    return zip(*(_column(table, name, n) for name in names))


class Row:
    """One row: an attribute per column (`row.start`)."""

    __slots__ = ("_table", "_i")

    def __init__(self, table, i):
        self._table = table
        self._i = i

    def __getattr__(self, name):
        col = getattr(self._table, name)
        return col[self._i] if self._i < len(col) else 0

    def duration(self):
        """`end - start` (0 when either is absent or end < start)."""
        return max(self.end - self.start, 0)

    def __repr__(self):
        cells = ", ".join(f"{n}={getattr(self, n)}" for n in self._table.column_names())
        return f"Row({cells})"


def rows(table):
    """Row objects of `table`, in production order."""
    return (Row(table, i) for i in range(row_count(table)))


def select(table, *names):
    """Column selection (in `configure` or `init`): the host then sends only
    these columns of `table`. Names may be written Python-style
    (`kernel_dispatches`, `correlation_id`) or as in WIT."""
    wit = lambda s: s.replace("_", "-")  # noqa: E731
    delivery.select_columns(wit(table), [wit(n) for n in names])


def receive_only(*tables):
    """Receive no column of any table but `tables` (whose selection is left
    as it is): for a plugin that reads one or two tables. A table an older
    host does not know (its `invalid-argument`) cannot be sent anyway."""
    keep = {t.replace("-", "_") for t in tables}
    for _t_id, t_field, t_wit, _cols in TABLES:
        if t_field not in keep:
            try:
                delivery.select_columns(t_wit, [])
            except Err as e:
                if e.value != Status.INVALID_ARGUMENT:
                    raise

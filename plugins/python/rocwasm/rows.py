"""Rows and columns over the columnar batch.

A batch table (`batch.kernel_dispatches`, `batch.api_calls`,
`batch.memory_copies`, ...) is a dataclass with one Python list per column,
named as in the WIT record with `_` for `-` (`correlation_id`). Columns the
plugin did not `select` arrive empty; a table's row count is the length of
its longest column, and an absent column reads as 0 -- as in the Rust SDK.

Two ways to loop:

- `for d in rows(batch.kernel_dispatches): d.end - d.start` -- row objects
  with an attribute per column (convenient, one object per row);
- `for start, end in columns(batch.kernel_dispatches, "start", "end"):` --
  plain tuples from `zip` (the fast loop: no object per row).
"""

import dataclasses
import itertools

from wit_world.imports import delivery


def row_count(table):
    """Rows in `table`: the length of its longest column."""
    return max((len(getattr(table, f.name)) for f in dataclasses.fields(table)), default=0)


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
        cells = ", ".join(
            f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self._table)
        )
        return f"Row({cells})"


def rows(table):
    """Row objects of `table`, in production order."""
    return (Row(table, i) for i in range(row_count(table)))


def select(table, *names):
    """Column projection (in `configure` or `init`): the host then copies
    only these columns of `table` into the plugin. Names may be written
    Python-style (`kernel_dispatches`, `correlation_id`) or as in WIT."""
    wit = lambda s: s.replace("_", "-")  # noqa: E731
    delivery.select_columns(wit(table), [wit(n) for n in names])

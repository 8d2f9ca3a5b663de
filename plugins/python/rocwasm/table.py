"""Summary tables: what `fini` returns, and the same table as CSV.

    t = Table("Kernel time per roctx range", ["Range", "Kernels", "GpuNs"])
    t.row("outer", 3, 1200)          # cells are converted with str()
    rocwasm.write_file("ranges.csv", t.csv())
    return [t]                       # export_analysis calls t.summary()

The host caps what it accepts (10 000 rows, 1 KiB per cell) and reports
what it cut.
"""

from wit_world.imports.types import SummaryTable


def _csv_cell(cell):
    if any(c in cell for c in ',"\n\r'):
        return '"' + cell.replace('"', '""') + '"'
    return cell


class Table:
    """A titled table of string cells."""

    def __init__(self, title, columns):
        self.title = str(title)
        self.columns = [str(c) for c in columns]
        self.rows = []

    def row(self, *cells):
        """Appends a row; it must have one cell per column."""
        if len(cells) != len(self.columns):
            raise ValueError(
                f"table `{self.title}` has {len(self.columns)} columns, the row has {len(cells)}"
            )
        self.rows.append([str(c) for c in cells])

    def summary(self):
        """The WIT `summary-table` record."""
        return SummaryTable(self.title, list(self.columns), [list(r) for r in self.rows])

    def csv(self):
        """Header and rows as CSV (RFC 4180 quoting), as bytes."""
        lines = [",".join(_csv_cell(c) for c in self.columns)]
        lines += [",".join(_csv_cell(c) for c in r) for r in self.rows]
        return ("\n".join(lines) + "\n").encode()

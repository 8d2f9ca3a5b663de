"""Reads a directory tree of rocwasm Parquet outputs with real clients.

Usage: python3 read_parquet.py ROOT

pyarrow opens every `*.parquet` file under ROOT and reports its column
names and row count; DuckDB runs SQL over all ranks' `kernel_trace.parquet`
at once (a glob) and reports the per-kernel totals and the rows per
process. Prints one JSON object; tests/tests/all/mpi.rs compares it with
rocwasm's own statistics and with the documented schema.
"""

import glob
import json
import os
import sys

import duckdb
import pyarrow.parquet as pq


def main(root):
    files = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "*.parquet"), recursive=True)):
        table = pq.read_table(path)
        files[os.path.relpath(path, root)] = {
            "columns": table.schema.names,
            "rows": table.num_rows,
        }
    kernels = os.path.join(root, "*", "kernel_trace.parquet")
    con = duckdb.connect()
    totals = con.execute(
        "SELECT Kernel_Name, count(*), sum(End_Timestamp - Start_Timestamp)::UBIGINT "
        f"FROM read_parquet('{kernels}') GROUP BY Kernel_Name ORDER BY Kernel_Name"
    ).fetchall()
    processes = con.execute(
        "SELECT rank, pid, hostname, job, count(*) "
        f"FROM read_parquet('{kernels}') GROUP BY ALL ORDER BY rank"
    ).fetchall()
    print(
        json.dumps(
            {
                "duckdb": duckdb.__version__,
                "files": files,
                "kernel_totals": [[n, c, int(t)] for n, c, t in totals],
                "processes": [list(p) for p in processes],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])

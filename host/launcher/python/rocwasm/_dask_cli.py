"""`rocwasm replay PATHS -c CHAIN --dask SCHEDULER [-d DIR]`: the CLI's
front door to :func:`rocwasm.dask.analyse` (the CLI runs this module).

Prints what ``rocwasm replay`` prints of a chain: each stage's tables,
the files written, and every failure; ``local`` starts a LocalCluster
with one worker process per core. Exit status 1 when a recording's part
was lost or a plugin failed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys


def _print_table(stage: str, table) -> None:
    title = (table.schema.metadata or {}).get(b"title", b"").decode()
    print(f"[{stage}] {title}")
    columns = table.column_names
    rows = [columns] + [list(r) for r in zip(*[table[c].to_pylist() for c in columns])]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(columns))]
    for row in rows:
        print("  " + "  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    print()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="rocwasm replay --dask")
    parser.add_argument("--scheduler", required=True)
    parser.add_argument("--chain", required=True)
    parser.add_argument("--output-dir")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    import rocwasm
    import rocwasm.dask

    try:
        if args.scheduler == "local":
            cluster = LocalCluster(processes=True, threads_per_worker=1, dashboard_address=None)
            client = Client(cluster)
        else:
            cluster = None
            client = Client(args.scheduler)
    except OSError as e:
        print(f"rocwasm: cannot reach the Dask scheduler {args.scheduler}: {e}", file=sys.stderr)
        return 2
    try:
        result = rocwasm.dask.analyse(
            args.paths, args.chain, client=client, output_dir=args.output_dir
        )
    except (rocwasm.RocwasmError, ValueError) as e:
        print(f"rocwasm: {e}", file=sys.stderr)
        return 2
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    workers = "a local cluster" if args.scheduler == "local" else args.scheduler
    print(f"analysed {result.recordings} recording(s) on {workers}")
    for stage, tables in result.tables.items():
        for t in tables:
            _print_table(stage, t)
    for stage, by_path in result.per_process.items():
        print(f"[{stage}] does not merge: its tables are per process ({len(by_path)} process(es))")
    if args.output_dir:
        files = sorted(os.listdir(args.output_dir)) if os.path.isdir(args.output_dir) else []
        print(f"wrote into {args.output_dir}:")
        for f in files:
            print(f"  {f}")
    for stage, by_path in result.lost.items():
        for path, why in by_path.items():
            print(f"rocwasm: stage `{stage}` lost {path}: {why}", file=sys.stderr)
    for f in result.failures:
        print(f"rocwasm: {f}", file=sys.stderr)
    return 1 if result.lost or result.failures else 0


if __name__ == "__main__":
    sys.exit(main())

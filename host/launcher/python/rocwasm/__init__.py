"""rocwasm from Python.

Read a recording into pyarrow tables, run a chain of rocwasm's Wasm
analysis plugins over it, take partial results and merge them, and
analyse a whole job's ranks on Dask (:mod:`rocwasm.dask`)::

    import rocwasm

    rec = rocwasm.read("out/")            # rocprofv3 CSV, JSON or rocpd
    rec.tables["kernel_trace"].to_pandas()

    chain = rocwasm.Chain("chain.toml")  # the site policy applies
    chain.replay("out/")
    for stage, tables in chain.finish().tables.items():
        print(stage, tables[0].schema.metadata[b"title"])

A chain takes one process's recording (kernel, agent and operation ids
are per process). For many, run one chain per recording, end each with
:meth:`Chain.finish_partial` and fold the partials into a last chain with
:meth:`Chain.merge` before :meth:`Chain.finish`; :func:`rocwasm.dask.analyse`
does exactly that as a tree of Dask tasks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from . import _rocwasm
from ._rocwasm import RocwasmError

__all__ = [
    "Chain",
    "Finished",
    "Parts",
    "Partial",
    "Recording",
    "RocwasmError",
    "discover",
    "read",
]

__version__ = _rocwasm.__version__

PathLike = Union[str, "os.PathLike[str]"]

# The stock plugins a wheel built by `cargo xtask wheel` carries.
_SHIPPED = Path(__file__).parent / "plugins"


@dataclass
class Recording:
    """A recording's trace tables.

    ``tables`` maps rocprofv3's table names (``kernel_trace``,
    ``hip_api_trace``, ``memory_copy_trace``, …) to ``pyarrow.Table``s with
    the schema of rocwasm's Parquet output: ``hostname``, ``rank``, ``job``
    and ``pid`` first, then the CSV file's columns, names resolved.
    ``meta`` is the recorded process (pid, hostname, command, rank, job,
    start and end in ns, records read); ``notes`` what the reader could not
    map, one sentence each.
    """

    tables: Dict[str, "object"]
    meta: Dict[str, object]
    notes: List[str]


def read(path: PathLike) -> Recording:
    """Reads a recording: a rocprofv3 CSV file or directory, a
    ``results.json``, a rocpd database (rocprofv3's or rocwasm's),
    rocwasm's record journal (a ``<pid>.journal`` file), or a directory of
    rocwasm's Parquet files (read by pyarrow, by table name).

    Columns cross from Rust into pyarrow through the Arrow C data
    interface, without a copy. Raises :class:`RocwasmError` with the
    reader's sentence (file, line, what) when the recording cannot be read.
    """
    p = Path(path)
    parquet = sorted(p.glob("*.parquet")) if p.is_dir() else []
    if p.suffix == ".parquet" or parquet:
        import pyarrow.parquet as pq

        files = [p] if p.suffix == ".parquet" else parquet
        tables = {}
        for f in files:
            name = f.stem
            for table in _TABLES:
                if name == table or name.endswith("_" + table):
                    name = table
            tables[name] = pq.read_table(f)
        return Recording(tables=tables, meta={}, notes=[])
    tables, meta, notes = _rocwasm.read(os.fspath(path))
    return Recording(tables=dict(tables), meta=dict(meta), notes=list(notes))


_TABLES = (
    "kernel_trace",
    "hip_api_trace",
    "hsa_api_trace",
    "marker_api_trace",
    "memory_copy_trace",
    "memory_allocation_trace",
    "scratch_memory_trace",
    "rccl_api_trace",
)


def discover(paths: Union[PathLike, Sequence[PathLike]]) -> List[Path]:
    """The recordings under ``paths``, one per process, as ``rocwasm
    replay`` finds them (an MPI job's per-rank output directories)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [Path(p) for p in _rocwasm.discover([os.fspath(p) for p in paths])]


@dataclass(frozen=True)
class Partial:
    """One stage's partial result (WIT 0.3.1's ``merge``): the plugin's own
    bytes, and the records offered to and taken by the instances it
    covers. Picklable: Dask moves it between workers."""

    data: bytes
    offered: int
    taken: int


@dataclass
class Parts:
    """How a chain ended as a part (:meth:`Chain.finish_partial`).

    ``partials``: per stage that merges, its partial result. ``tables``:
    per stage that does not, its own tables (this process's alone).
    ``lost``: per stage that merges but gave no partial, why (a failure).
    ``failures`` and ``notes``: one sentence each.
    """

    partials: Dict[str, Partial] = field(default_factory=dict)
    tables: Dict[str, list] = field(default_factory=dict)
    lost: Dict[str, str] = field(default_factory=dict)
    failures: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)


@dataclass
class Finished:
    """How a chain ended (:meth:`Chain.finish`): per stage, the
    ``pyarrow.Table``s its ``fini`` returned (string columns, the title in
    ``schema.metadata[b"title"]``); plugin failures and reader notes."""

    tables: Dict[str, list]
    failures: List[str]
    notes: List[str]


class Chain:
    """A chain file's plugins, admitted by the site policy exactly as the
    CLI admits them (signatures, digests, services: a refusal raises
    :class:`RocwasmError` with the policy's sentence).

    ``plugin_path``: directories searched first for stock plugin names
    (then the stock plugins the wheel carries, then ``ROCWASM_PLUGIN_PATH``).
    ``output_dir``: where stages granted output write their files at
    :meth:`finish` (``None``: no stage writes a file).
    """

    def __init__(
        self,
        chain: PathLike,
        *,
        plugin_path: Optional[Sequence[PathLike]] = None,
        output_dir: Optional[PathLike] = None,
    ) -> None:
        search = [os.fspath(p) for p in plugin_path or []]
        if _SHIPPED.is_dir():
            search.append(os.fspath(_SHIPPED))
        self._chain = _rocwasm.Chain(
            os.fspath(chain),
            search or None,
            os.fspath(output_dir) if output_dir is not None else None,
        )

    @property
    def stages(self) -> List[str]:
        """The stages, in chain order."""
        return list(self._chain.stages)

    def merges(self, stage: str) -> bool:
        """True when ``stage``'s plugin exports ``merge``."""
        return self._chain.merges(stage)

    def replay(self, path: PathLike) -> int:
        """Delivers every record of one process's recording; the count."""
        return self._chain.replay(os.fspath(path))

    def merge(self, stage: str, partial: Partial) -> None:
        """Folds ``partial`` (from another chain of the same file) into
        ``stage``."""
        self._chain.merge(stage, partial.data, partial.offered, partial.taken)

    def finish(self) -> Finished:
        """Ends the chain: each stage's ``fini``."""
        tables, failures, notes = self._chain.finish()
        return Finished(tables=dict(tables), failures=list(failures), notes=list(notes))

    def finish_partial(self) -> Parts:
        """Ends the chain as a part: each merging stage's partial result."""
        ends, failures, notes = self._chain.finish_partial()
        parts = Parts(failures=list(failures), notes=list(notes))
        for stage, end in ends.items():
            if end[0] == "partial":
                parts.partials[stage] = Partial(bytes(end[1]), int(end[2]), int(end[3]))
            elif end[0] == "tables":
                parts.tables[stage] = list(end[1])
            else:
                parts.lost[stage] = end[1]
        return parts

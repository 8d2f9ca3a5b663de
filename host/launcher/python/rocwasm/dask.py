"""A chain over a whole job's recordings, as Dask tasks.

One task per recording (a rank's output directory, found as ``rocwasm
replay`` finds them) runs the chain over it and ends it as a part: each
stage that merges (WIT 0.3.1's ``merge``) gives its partial result. The
partials are reduced in a tree, ``split_every`` at a time, each node a
fresh chain that merges its children's partials; the root merges the
last ones and finishes, writing the stages' files into ``output_dir``.
Its tables equal a single-process ``rocwasm replay`` of the same files.

A stage that does not merge cannot be reduced: its tables come back per
recording (:attr:`Analysis.per_process`). A part whose plugin failed for
good gives no partial: the recording is named in :attr:`Analysis.lost`
and the rest completes. A worker that dies mid-task costs a retry (the
scheduler runs its tasks again elsewhere), not a wrong answer: every task
is a pure function of its inputs.

Workers need the package and the plugins' files (the chain file's paths,
or ``plugin_path``) on a shared filesystem, as they need the recordings.
The site policy applies on each worker, as in the CLI::

    from dask.distributed import Client
    import rocwasm.dask

    with Client("tcp://scheduler:8786") as client:
        result = rocwasm.dask.analyse("job/out", "stats.toml", client=client,
                                      output_dir="job/analysis")
    result.tables["kernel-stats"][0]
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from . import Chain, Partial, discover

__all__ = ["Analysis", "analyse"]


@dataclass
class Analysis:
    """What :func:`analyse` gives.

    ``tables``: per merging stage, its ``pyarrow.Table``s over every
    recording. ``per_process``: per stage that does not merge, per
    recording, its own tables. ``lost``: per stage, the recordings whose
    part gave no partial, with why. ``failures``: plugin failures, each
    prefixed with its recording. ``recordings``: how many were analysed.
    """

    tables: Dict[str, list] = field(default_factory=dict)
    per_process: Dict[str, Dict[str, list]] = field(default_factory=dict)
    lost: Dict[str, Dict[str, str]] = field(default_factory=dict)
    failures: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    recordings: int = 0


@dataclass
class _Node:
    """A subtree's result: partials per stage, and what cannot merge."""

    partials: Dict[str, Partial] = field(default_factory=dict)
    per_process: Dict[str, Dict[str, list]] = field(default_factory=dict)
    lost: Dict[str, Dict[str, str]] = field(default_factory=dict)
    failures: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    recordings: int = 0


def _part(chain: str, path: str, plugin_path: Optional[List[str]]) -> _Node:
    c = Chain(chain, plugin_path=plugin_path)
    c.replay(path)
    parts = c.finish_partial()
    node = _Node(recordings=1)
    node.partials = dict(parts.partials)
    for stage, tables in parts.tables.items():
        node.per_process.setdefault(stage, {})[path] = tables
    for stage, why in parts.lost.items():
        node.lost.setdefault(stage, {})[path] = why
    node.failures = [f"{path}: {f}" for f in parts.failures]
    node.notes = [f"{path}: {n}" for n in parts.notes]
    return node


def _gather(children: Sequence[_Node]) -> _Node:
    out = _Node()
    for child in children:
        for stage, by_path in child.per_process.items():
            out.per_process.setdefault(stage, {}).update(by_path)
        for stage, by_path in child.lost.items():
            out.lost.setdefault(stage, {}).update(by_path)
        out.failures += child.failures
        out.notes += child.notes
        out.recordings += child.recordings
    return out


def _merged_into(c: Chain, children: Sequence[_Node]) -> None:
    for child in children:
        for stage, partial in child.partials.items():
            c.merge(stage, partial)


def _combine(chain: str, plugin_path: Optional[List[str]], children: Sequence[_Node]) -> _Node:
    out = _gather(children)
    if not any(child.partials for child in children):
        return out
    c = Chain(chain, plugin_path=plugin_path)
    _merged_into(c, children)
    parts = c.finish_partial()
    out.partials = dict(parts.partials)
    out.failures += [f"merging: {f}" for f in parts.failures]
    return out


def _final(
    chain: str,
    plugin_path: Optional[List[str]],
    output_dir: Optional[str],
    children: Sequence[_Node],
) -> Analysis:
    node = _gather(children)
    c = Chain(chain, plugin_path=plugin_path, output_dir=output_dir)
    merging = {s for child in children for s in child.partials}
    _merged_into(c, children)
    done = c.finish()
    return Analysis(
        # A stage that does not merge finished empty here: its tables are
        # the processes' own.
        tables={s: t for s, t in done.tables.items() if s in merging},
        per_process=node.per_process,
        lost=node.lost,
        failures=node.failures + [f"merging: {f}" for f in done.failures],
        notes=node.notes,
        recordings=node.recordings,
    )


def analyse(
    paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    chain: Union[str, "os.PathLike[str]"],
    *,
    client=None,
    plugin_path: Optional[Sequence[Union[str, "os.PathLike[str]"]]] = None,
    output_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    split_every: int = 8,
    retries: int = 2,
) -> Analysis:
    """Runs ``chain`` over every recording under ``paths`` as Dask tasks
    and reduces the partial results in a tree (see the module docs).

    ``client``: a ``dask.distributed.Client`` (its cluster runs the tasks,
    each retried up to ``retries`` times); ``None`` runs them on Dask's
    local scheduler. ``output_dir``: where the stages write their files at
    the end (``None``: no files).
    """
    import dask

    if split_every < 2:
        raise ValueError("split_every must be at least 2")
    recordings = [os.fspath(p) for p in discover(paths)]
    if not recordings:
        raise ValueError(f"no recording found under {paths!r}")
    chain = os.path.abspath(os.fspath(chain))
    plugins = [os.path.abspath(os.fspath(p)) for p in plugin_path] if plugin_path else None
    out = os.path.abspath(os.fspath(output_dir)) if output_dir is not None else None

    # Keys unique to this call: a later call over files that changed on
    # disk must not be answered from results the cluster still holds.
    run = uuid.uuid4().hex[:12]
    layer = [
        dask.delayed(_part, pure=False)(chain, path, plugins, dask_key_name=f"rocwasm-part-{run}-{i}")
        for i, path in enumerate(recordings)
    ]
    depth = 0
    while len(layer) > split_every:
        depth += 1
        layer = [
            dask.delayed(_combine, pure=False)(
                chain,
                plugins,
                layer[i : i + split_every],
                dask_key_name=f"rocwasm-merge-{run}-{depth}-{i // split_every}",
            )
            for i in range(0, len(layer), split_every)
        ]
    root = dask.delayed(_final, pure=False)(
        chain, plugins, out, layer, dask_key_name=f"rocwasm-final-{run}"
    )
    if client is not None:
        return client.compute(root, retries=retries).result()
    return root.compute()

"""`rocwasm.Chain`: a chain file's plugins over a recording, their tables,
their partial results, and the site policy."""

import csv
import io

import pytest

import rocwasm
from conftest import SAMPLE, csv_files, rocwasm as cli


def test_a_chain_gives_the_tables_and_files_the_cli_replay_gives(tmp_path, stats_chain):
    chain = rocwasm.Chain(stats_chain, output_dir=tmp_path / "py")
    assert chain.stages == ["kernel-stats", "api-stats", "memcpy-bandwidth"]
    assert all(chain.merges(s) for s in chain.stages)
    assert chain.replay(SAMPLE) > 0
    done = chain.finish()
    assert done.failures == []
    cli("replay", SAMPLE, "-c", stats_chain, "-d", tmp_path / "cli")
    assert csv_files(tmp_path / "py") == csv_files(tmp_path / "cli")
    # The returned table is the file's.
    (kernels,) = done.tables["kernel-stats"]
    assert kernels.schema.metadata[b"title"] == b"Kernel dispatch statistics"
    with open(tmp_path / "cli/kernel_stats.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert kernels.column_names == rows[0]
    assert [list(r[:3]) for r in zip(*[kernels[c].to_pylist() for c in kernels.column_names])] == [
        r[:3] for r in rows[1:]
    ]


def test_partials_of_two_recordings_merge(tmp_path, stats_chain):
    parts = []
    for recording in [SAMPLE, SAMPLE / "sample_results.json"]:
        chain = rocwasm.Chain(stats_chain)
        chain.replay(recording)
        part = chain.finish_partial()
        assert set(part.partials) == {"kernel-stats", "api-stats", "memcpy-bandwidth"}
        assert part.lost == {} and part.failures == []
        parts.append(part)
    reducer = rocwasm.Chain(stats_chain)
    for part in parts:
        for stage, partial in part.partials.items():
            reducer.merge(stage, partial)
    merged = reducer.finish().tables["kernel-stats"][0]
    single = rocwasm.Chain(stats_chain)
    single.replay(SAMPLE)
    once = single.finish().tables["kernel-stats"][0]
    # The same 80 dispatches twice: every count doubles.
    assert merged["Calls"].to_pylist() == [str(2 * int(c)) for c in once["Calls"].to_pylist()]


def test_a_chain_takes_one_recording(stats_chain):
    chain = rocwasm.Chain(stats_chain)
    chain.replay(SAMPLE)
    with pytest.raises(rocwasm.RocwasmError, match="one process's recording"):
        chain.replay(SAMPLE)


def test_the_site_policy_refuses_an_unsigned_plugin(tmp_path, stats_chain, monkeypatch):
    policy = tmp_path / "strict.toml"
    policy.write_text("version = 1\n[plugins]\nallow_unsigned = false\n")
    monkeypatch.setenv("ROCWASM_TEST_POLICY", str(policy))
    with pytest.raises(rocwasm.RocwasmError) as refused:
        rocwasm.Chain(stats_chain)
    text = str(refused.value)
    assert "is refused by the site policy" in text, text
    assert "rule `plugins.allow_unsigned`" in text and "kernel-stats" in text, text

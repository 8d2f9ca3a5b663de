"""Fixtures of the Python package's tests.

They run from `tests/tests/all/python_package.rs`, which builds the wheel,
installs it into a scratch directory on PYTHONPATH and sets:
ROCWASM_REPO (the repository), ROCWASM_BIN (the CLI, for the recordings
and the replays the package is compared with), ROCWASM_PLUGIN_PATH (the
stock and test plugins) and ROCWASM_SIM (the simulated runtime's build).
"""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(os.environ["ROCWASM_REPO"])
BIN = Path(os.environ["ROCWASM_BIN"])
SIM = Path(os.environ["ROCWASM_SIM"])
SAMPLE = REPO / "examples/traces/sample"

# The statistics stages of `--stats` as a chain file (all three merge).
STATS_CHAIN = REPO / "examples/chains/stats.toml"


def rocwasm(*args, cwd=None, env=None):
    """Runs the CLI; fails the test with its output when it fails."""
    full = dict(os.environ)
    full.update(env or {})
    done = subprocess.run(
        [str(BIN), *map(str, args)], cwd=cwd, env=full, capture_output=True, text=True
    )
    assert done.returncode == 0, f"rocwasm {' '.join(map(str, args))}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture
def stats_chain():
    return STATS_CHAIN


@pytest.fixture(scope="session")
def job64(tmp_path_factory):
    """A 64-rank job's recordings: Open MPI's mpirun starts 64 ranks of
    `rocwasm run --sim --sys-trace -- vector_add`, each writing its CSV
    files into out/<rank>."""
    root = tmp_path_factory.mktemp("job64")
    done = subprocess.run(
        [
            "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "64",
            str(BIN), "run", "--sim", "--sys-trace", "-d", "out/%rank%",
            "--output-format", "csv", "--", str(SIM / "bin/vector_add"), "2",
        ],
        cwd=root, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = root / "out"
    ranks = sorted(p for p in out.iterdir() if (p / "kernel_trace.csv").is_file())
    assert len(ranks) == 64, [p.name for p in out.iterdir()]
    return out


def csv_files(directory):
    """The statistics files a chain's stages wrote, by name: their bytes
    (not the host's trace files, which a CLI replay writes beside them)."""
    return {
        p.name: p.read_bytes()
        for p in sorted(Path(directory).glob("*.csv"))
        if not p.name.endswith("_trace.csv")
    }

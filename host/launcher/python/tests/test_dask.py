"""`rocwasm.dask` on a real `dask.distributed.LocalCluster` (2 worker
processes, loopback only): a 64-rank job's recordings analysed as tasks
and reduced in a tree, compared file for file with `rocwasm replay` of
the same recordings; again with a worker killed mid-run; and with a plugin
that traps on one rank's data."""

import os
import signal
import threading
import time

import pytest
from dask.distributed import Client, LocalCluster

import rocwasm
import rocwasm.dask
from conftest import csv_files, rocwasm as cli


@pytest.fixture(scope="module")
def client():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True,
        host="127.0.0.1", dashboard_address=None,
    ) as cluster, Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def replayed(job64, tmp_path_factory):
    """`rocwasm replay` of the whole job through the stats chain."""
    from conftest import STATS_CHAIN as chain

    root = tmp_path_factory.mktemp("cli")
    cli("replay", job64, "-c", chain, "-d", root / "out")
    files = csv_files(root / "out")
    assert set(files) >= {"kernel_stats.csv", "hip_api_stats.csv", "memcpy_bandwidth_by_direction.csv"}
    return chain, files


def test_the_job_on_two_workers_equals_the_single_process_replay(client, job64, replayed, tmp_path):
    chain, want = replayed
    result = rocwasm.dask.analyse(job64, chain, client=client, output_dir=tmp_path)
    assert result.recordings == 64
    assert result.failures == [] and result.lost == {}
    assert csv_files(tmp_path) == want
    assert set(result.tables) == {"kernel-stats", "api-stats", "memcpy-bandwidth"}
    calls = sum(int(c) for c in result.tables["kernel-stats"][0]["Calls"].to_pylist())
    kernels = sum(rocwasm.read(job64 / str(r)).tables["kernel_trace"].num_rows for r in range(64))
    assert calls == kernels


def test_the_clis_front_door_runs_the_same_on_the_cluster(client, job64, replayed, tmp_path):
    chain, want = replayed
    done = cli("replay", job64, "-c", chain, "--dask", client.scheduler.address, "-d", tmp_path / "out")
    assert "analysed 64 recording(s)" in done.stdout, done.stdout
    assert "[kernel-stats] Kernel dispatch statistics" in done.stdout, done.stdout
    assert csv_files(tmp_path / "out") == want


def test_a_worker_killed_mid_run_costs_a_retry_not_a_wrong_answer(client, job64, replayed, tmp_path):
    chain, want = replayed
    box = {}
    run = threading.Thread(
        target=lambda: box.update(result=rocwasm.dask.analyse(
            job64, chain, client=client, output_dir=tmp_path, split_every=4)),
    )
    run.start()
    killed = None
    deadline = time.time() + 60
    while killed is None and run.is_alive() and time.time() < deadline:
        busy = [w for w, tasks in client.processing().items() if tasks]
        if busy:
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed = busy[0]
        else:
            time.sleep(0.005)
    assert killed is not None, "no task was ever seen running"
    run.join(timeout=300)
    assert not run.is_alive()
    result = box["result"]
    assert result.recordings == 64 and result.lost == {}
    assert csv_files(tmp_path) == want
    client.wait_for_workers(2, timeout=60)


def test_a_plugin_that_traps_on_one_rank_names_it_and_the_rest_completes(client, job64, replayed, tmp_path):
    chain, want = replayed
    victim = job64 / "5"
    pid = rocwasm.read(victim).meta["pid"]
    trapping = tmp_path / "trapping.toml"
    trapping.write_text(
        chain.read_text()
        + '\n[[stage]]\nname = "counter"\nplugin = "merge-counter"\ndomains = ["kernel_dispatch"]\n'
        + 'on_failure = "disable"\n'
        + 'config = { trap_pid = "%d" }\n' % pid
    )
    out = tmp_path / "out"
    result = rocwasm.dask.analyse(job64, trapping, client=client, output_dir=out)
    assert list(result.lost) == ["counter"]
    assert list(result.lost["counter"]) == [str(victim)], result.lost
    assert any(
        f.startswith(f"{victim}: plugin `counter` failed in `deliver-batch`") for f in result.failures
    ), result.failures
    # The other stages saw every rank.
    assert csv_files(out) == want
    # The counter's table covers the other 63 ranks' dispatches.
    counted = {r[0]: int(r[1]) for r in zip(*[result.tables["counter"][0][c].to_pylist() for c in ["Table", "Records"]])}
    kernels = sum(rocwasm.read(job64 / str(r)).tables["kernel_trace"].num_rows for r in range(64) if r != 5)
    assert counted["kernel-dispatches"] == kernels

"""`rocwasm.read`: every recording format rocwasm reads, into pyarrow."""

import csv

import pyarrow as pa
import pytest

import rocwasm
from conftest import SAMPLE, rocwasm as cli


def kernel_rows():
    with open(SAMPLE / "sample_kernel_trace.csv", newline="") as f:
        return list(csv.DictReader(f))


def check_kernels(table):
    rows = kernel_rows()
    assert table.num_rows == len(rows) == 80
    assert table.column_names[:4] == ["hostname", "rank", "job", "pid"]
    assert table.schema.field("Kernel_Name").type == pa.string()
    assert table.schema.field("Start_Timestamp").type == pa.uint64()
    assert table.schema.field("Grid_Size_X").type == pa.uint32()
    # Row for row as the CSV file records them.
    got = sorted(zip(table["Correlation_Id"].to_pylist(), table["Kernel_Name"].to_pylist(),
                     table["End_Timestamp"].to_pylist()))
    want = sorted((int(r["Correlation_Id"]), r["Kernel_Name"], int(r["End_Timestamp"])) for r in rows)
    assert got == want


def test_a_csv_directory():
    rec = rocwasm.read(SAMPLE)
    check_kernels(rec.tables["kernel_trace"])
    assert rec.tables["hip_api_trace"].num_rows == 120
    assert rec.meta["pid"] == 4266
    # The statistics files it does not read are said, not skipped silently.
    assert any("sample_kernel_stats.csv" in n for n in rec.notes), rec.notes


def test_rocprofv3_json():
    rec = rocwasm.read(SAMPLE / "sample_results.json")
    check_kernels(rec.tables["kernel_trace"])
    assert rec.meta["command"] == ["/opt/app/bin/app", "--size", "80"]


def test_a_rocpd_database_and_parquet_files(tmp_path):
    cli("replay", SAMPLE, "-d", tmp_path / "out", "--output-format", "rocpd,parquet")
    db = next((tmp_path / "out").glob("*.db"))
    from_db = rocwasm.read(db)
    check_kernels(from_db.tables["kernel_trace"])
    from_parquet = rocwasm.read(tmp_path / "out")
    check_kernels(from_parquet.tables["kernel_trace"])
    # One schema, whichever the source.
    assert from_db.tables["kernel_trace"].schema == from_parquet.tables["kernel_trace"].schema


def test_a_file_that_is_no_recording_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with pytest.raises(rocwasm.RocwasmError, match="bad.json"):
        rocwasm.read(bad)


def test_rocwasms_record_journal(tmp_path):
    from conftest import SIM

    cli(
        "run", "--sim", "--kernel-trace", "-d", tmp_path / "out", "--output-format", "csv",
        "--", SIM / "bin/multi_kernel",
        env={"ROCWASM_KEEP_JOURNAL": "1"},
    )
    journals = sorted(tmp_path.rglob("*.journal"))
    assert journals, sorted(p.name for p in tmp_path.rglob("*"))
    rec = rocwasm.read(journals[0])
    with open(tmp_path / "out/kernel_trace.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    table = rec.tables["kernel_trace"]
    assert table.num_rows == len(rows) > 0
    assert sorted(table["Kernel_Name"].to_pylist()) == sorted(r["Kernel_Name"] for r in rows)
    assert rec.meta["command"][0].endswith("multi_kernel")

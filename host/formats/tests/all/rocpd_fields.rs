//! The info columns rocprofv3 fills, filled: each query below is one that
//! AMD's rocpd views (`code_objects`, `kernel_symbols`) or its readers of
//! `rocpd_info_agent` / `rocpd_info_node` run, with the value it must give
//! for the sample run. The expected values are written from rocprofiler-sdk's
//! writer (its agent, code-object and kernel-symbol structs serialized into
//! `extdata` under their member names; the node from `uname`).

use crate::common;

use rocwasm_core::{AgentInfo, AgentProperties, AgentType};
use rocwasm_formats::RocpdSink;
use rusqlite::Connection;

fn write() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let (run, names) = common::sample(5, 30);
    run.symbols.insert_agent(AgentInfo {
        id: 0x3000,
        node_id: 3,
        agent_type: AgentType::Gpu,
        name: "gfx942".into(),
        product_name: "AMD Instinct MI300X".into(),
        properties: AgentProperties {
            compute_units: 304,
            simds_per_cu: 4,
            wavefront_size: 64,
            chip_id: 0x74a1,
            local_memory_bytes: 192 << 30,
            ..Default::default()
        },
    });
    common::write_run(&run, &names, &mut [Box::new(RocpdSink::at_path(&db))]);
    let conn = Connection::open(&db).unwrap();
    (dir, conn)
}

#[test]
fn code_objects_carry_their_struct_size_and_storage() {
    let (_dir, conn) = write();
    let rows: Vec<(i64, i64, i64, i64)> = conn
        .prepare("SELECT code_object_size, storage_type, memory_base, memory_size FROM code_objects ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    for row in rows {
        // sizeof(rocprofiler_callback_tracing_code_object_load_data_t),
        // storage 2 = MEMORY, the sample's memory range.
        assert_eq!(row, (88, 2, 0x5555_0000_0000, 40960));
    }
}

#[test]
fn kernel_symbols_carry_size_entry_offset_names_and_address() {
    let (_dir, conn) = write();
    let (size, offset, demangled, truncated, address): (i64, i64, String, String, i64) = conn
        .query_row(
            "SELECT kernel_symbol_size, kernel_code_entry_byte_offset, demangled_kernel_name, \
             truncated_kernel_name, kernel_address FROM kernel_symbols WHERE kernel_id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(size, 88, "sizeof the kernel-symbol register record");
    assert_eq!(offset, 0x1000);
    assert_eq!(
        demangled,
        "vectorAdd(float const*, float const*, float*, int)"
    );
    assert_eq!(truncated, "vectorAdd");
    assert_eq!(address, 0x7f00_0000_1000 + 0x100);
}

#[test]
fn agents_carry_uuid_vendor_user_name_and_their_properties() {
    let (_dir, conn) = write();
    let row: (i64, String, String, i64, i64, i64, i64) = conn
        .query_row(
            "SELECT uuid, vendor_name, user_name, json_extract(extdata, '$.size'), \
             json_extract(extdata, '$.id.handle'), json_extract(extdata, '$.cu_count'), \
             json_extract(extdata, '$.node_id') FROM rocpd_info_agent WHERE id = 12288",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .unwrap();
    assert_eq!(
        row,
        (
            0x74a1,
            "AMD".into(),
            "AMD Instinct MI300X".into(),
            312,
            0x3000,
            304,
            3
        )
    );
    // Every agent row has its struct in extdata, none the empty object.
    let empty: i64 = conn
        .query_row(
            "SELECT count(*) FROM rocpd_info_agent WHERE extdata = '{}' OR user_name IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(empty, 0);
}

#[test]
fn the_node_row_names_the_kernel_release_version_and_machine() {
    let (_dir, conn) = write();
    let (release, version, hardware): (String, String, String) = conn
        .query_row(
            "SELECT release, version, hardware_name FROM rocpd_info_node",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let uname = |flag: &str| {
        let out = std::process::Command::new("uname")
            .arg(flag)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(release, uname("-r"));
    assert_eq!(version, uname("-v"));
    assert_eq!(hardware, uname("-m"));
}

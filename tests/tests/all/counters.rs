//! Hardware counters on the simulated GPU, end to end: `rocwasm run --sim
//! --pmc …` writes `counter_collection.csv`, its values follow from each
//! dispatch as `kernel_trace.csv` records it, derived counters equal their
//! expressions over the base counters' rows, runs repeat their values, and
//! a replay of the file gives the same rows.
//!
//! Needs `cargo xtask build-sim` (and the tool library, built with the
//! workspace).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rocwasm_tests::*;

/// `rocwasm ARGS` in `dir`, which must succeed.
fn ok(args: &[&str], dir: &Path) {
    let out = rocwasm(args, dir);
    assert_success(&out, &format!("rocwasm {}", args.join(" ")));
}

/// `rocwasm run --sim FLAGS -d OUT -- multi_kernel` in `dir`.
fn run(dir: &Path, out: &str, flags: &[&str]) -> PathBuf {
    let app = sim_dir().join("bin/multi_kernel");
    let mut args = vec!["run", "--sim"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-d", out, "--", app.to_str().unwrap()]);
    ok(&args, dir);
    dir.join(out)
}

/// The rows of a CSV file, each a map from header name to field.
fn rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut reader =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn num(row: &HashMap<String, String>, key: &str) -> u64 {
    row[key]
        .parse()
        .unwrap_or_else(|e| panic!("{key} = {:?}: {e}", row[key]))
}

fn value(row: &HashMap<String, String>) -> f64 {
    row["Counter_Value"].parse().unwrap()
}

/// Waves of a launch, computed here from the geometry: per workgroup
/// ⌈work-items / 64⌉, the workgroups at the grid's edges holding what is
/// left. Walks every workgroup (the sample's grids are small).
fn waves(grid: [u64; 3], workgroup: [u64; 3]) -> u64 {
    let blocks: Vec<Vec<u64>> = (0..3)
        .map(|d| {
            let (g, w) = (grid[d].max(1), workgroup[d].max(1).min(grid[d].max(1)));
            (0..g.div_ceil(w)).map(|i| w.min(g - i * w)).collect()
        })
        .collect();
    let mut total = 0;
    for x in &blocks[0] {
        for y in &blocks[1] {
            for z in &blocks[2] {
                total += (x * y * z).div_ceil(64);
            }
        }
    }
    total
}

/// (kernel, counter) → the values of every dispatch, sorted: what two runs
/// of the same program must agree on (dispatch ids and times may differ).
fn by_kernel(rows: &[HashMap<String, String>]) -> BTreeMap<(String, String), Vec<String>> {
    let mut out: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for r in rows {
        out.entry((r["Kernel_Name"].clone(), r["Counter_Name"].clone()))
            .or_default()
            .push(r["Counter_Value"].clone());
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

#[test]
fn pmc_counts_every_dispatch_and_sq_waves_follow_the_launch_geometry() {
    let tmp = tempfile::tempdir().unwrap();
    let flags = [
        "--pmc",
        "SQ_WAVES",
        "GRBM_GUI_ACTIVE",
        "SQ_INSTS_VALU",
        "--kernel-trace",
    ];
    let out = run(tmp.path(), "out", &flags);
    let kernels = rows(&out.join("kernel_trace.csv"));
    let counters = rows(&out.join("counter_collection.csv"));
    assert!(!kernels.is_empty());
    // One row per dispatch and counter, in rocprofv3's columns.
    assert_eq!(counters.len(), kernels.len() * 3);
    let header = std::fs::read_to_string(out.join("counter_collection.csv")).unwrap();
    assert!(header.starts_with(
        "\"Correlation_Id\",\"Dispatch_Id\",\"Agent_Id\",\"Queue_Id\",\"Process_Id\",\"Thread_Id\",\
         \"Grid_Size\",\"Kernel_Id\",\"Kernel_Name\",\"Workgroup_Size\",\"LDS_Block_Size\",\
         \"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Counter_Name\",\
         \"Counter_Value\",\"Start_Timestamp\",\"End_Timestamp\"\n"
    ));
    let dispatches: HashMap<u64, &HashMap<String, String>> =
        kernels.iter().map(|k| (num(k, "Dispatch_Id"), k)).collect();
    let mut checked = 0;
    for c in &counters {
        let k = dispatches[&num(c, "Dispatch_Id")];
        assert_eq!(c["Kernel_Name"], k["Kernel_Name"]);
        assert_eq!(c["Correlation_Id"], k["Correlation_Id"]);
        assert_eq!(c["Start_Timestamp"], k["Start_Timestamp"]);
        let grid = ["X", "Y", "Z"].map(|a| num(k, &format!("Grid_Size_{a}")));
        let wg = ["X", "Y", "Z"].map(|a| num(k, &format!("Workgroup_Size_{a}")));
        assert_eq!(num(c, "Grid_Size"), grid.iter().product::<u64>());
        assert_eq!(num(c, "Workgroup_Size"), wg.iter().product::<u64>());
        let duration = num(k, "End_Timestamp") - num(k, "Start_Timestamp");
        match c["Counter_Name"].as_str() {
            "SQ_WAVES" => {
                assert_eq!(value(c), waves(grid, wg) as f64, "{c:?}");
                checked += 1;
            }
            // The simulated MI210's 1700 MHz clock over the dispatch.
            "GRBM_GUI_ACTIVE" => {
                assert_eq!(value(c), (duration * 1700).div_ceil(1000) as f64, "{c:?}")
            }
            // 16 vector ALU instructions a wave by default.
            "SQ_INSTS_VALU" => assert_eq!(value(c), 16.0 * waves(grid, wg) as f64),
            other => panic!("unexpected counter {other}"),
        }
    }
    assert_eq!(checked, kernels.len());

    // A second run counts the same.
    let again = rows(&run(tmp.path(), "again", &flags).join("counter_collection.csv"));
    assert_eq!(by_kernel(&counters), by_kernel(&again));
}

#[test]
fn derived_counters_equal_their_expressions_and_a_replay_reads_the_file_back() {
    let tmp = tempfile::tempdir().unwrap();
    // GRBM has two counter registers: GPU_UTIL needs the two asked for.
    let out = run(
        tmp.path(),
        "out",
        &[
            "--pmc",
            "GRBM_GUI_ACTIVE,GRBM_COUNT,GPU_UTIL",
            "SQ_WAVES",
            "Wavefronts",
            "SQ_WAVE_CYCLES",
            "OccupancyPercent",
            "CU_NUM",
            "-f",
            "csv,rocpd,json",
        ],
    );
    let counters = rows(&out.join("counter_collection.csv"));
    let mut per_dispatch: BTreeMap<u64, HashMap<String, f64>> = BTreeMap::new();
    for c in &counters {
        per_dispatch
            .entry(num(c, "Dispatch_Id"))
            .or_default()
            .insert(c["Counter_Name"].clone(), value(c));
    }
    assert!(!per_dispatch.is_empty());
    // The CSV has six decimals: compare at that precision.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    for (id, v) in &per_dispatch {
        assert_eq!(v.len(), 8, "dispatch {id}: {v:?}");
        let gpu_util = 100.0 * v["GRBM_GUI_ACTIVE"] / v["GRBM_COUNT"];
        assert!(close(v["GPU_UTIL"], gpu_util), "dispatch {id}: {v:?}");
        assert_eq!(v["Wavefronts"], v["SQ_WAVES"]);
        assert_eq!(v["CU_NUM"], 104.0);
        let occupancy = 400.0 * v["SQ_WAVE_CYCLES"] / v["GRBM_GUI_ACTIVE"] / v["CU_NUM"] / 32.0;
        assert!(
            close(v["OccupancyPercent"], occupancy),
            "dispatch {id}: {v:?}"
        );
    }

    // rocpd's counters_collection view: a row per dispatch and counter,
    // summed, as the CSV has them.
    let db = out.join("results.db");
    let view = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3, sys\n\
             db = sqlite3.connect(sys.argv[1])\n\
             for r in db.execute('SELECT dispatch_id, counter_name, value FROM counters_collection'):\n\
             \x20   print(*r)\n\
             assert not db.execute('PRAGMA foreign_key_check').fetchall()\n",
        )
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        view.status.success(),
        "{}",
        String::from_utf8_lossy(&view.stderr)
    );
    let mut from_view: Vec<(u64, String, f64)> = String::from_utf8(view.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].parse().unwrap(),
                f[1].to_string(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    let mut from_csv: Vec<(u64, String, f64)> = counters
        .iter()
        .map(|r| (num(r, "Dispatch_Id"), r["Counter_Name"].clone(), value(r)))
        .collect();
    let order = |a: &(u64, String, f64), b: &(u64, String, f64)| (a.0, &a.1).cmp(&(b.0, &b.1));
    from_view.sort_by(order);
    from_csv.sort_by(order);
    assert_eq!(from_view.len(), from_csv.len());
    for (v, c) in from_view.iter().zip(&from_csv) {
        assert_eq!((v.0, &v.1), (c.0, &c.1));
        assert!(close(v.2, c.2), "{v:?} vs {c:?}");
    }

    // The recording's counter_collection.csv and its rocpd database,
    // replayed: the same rows.
    ok(
        &["replay", "out/results.db", "-d", "from-rocpd", "-f", "csv"],
        tmp.path(),
    );
    let from_rocpd = rows(&tmp.path().join("from-rocpd/counter_collection.csv"));
    assert_eq!(from_rocpd.len(), counters.len());

    // results.json: rocprofv3's callback_records.counter_collection, a
    // record per dispatch naming its counters through `counters`; its
    // replay gives the CSV's rows.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let process = &json["rocprofiler-sdk-tool"][0];
    let names: HashMap<u64, String> = process["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"]["handle"].as_u64().unwrap(),
                c["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let collected = process["callback_records"]["counter_collection"]
        .as_array()
        .unwrap();
    assert_eq!(collected.len(), per_dispatch.len());
    for rec in collected {
        let id = rec["dispatch_data"]["dispatch_info"]["dispatch_id"]
            .as_u64()
            .unwrap();
        let values = rec["records"].as_array().unwrap();
        assert_eq!(values.len(), 8, "dispatch {id}");
        for v in values {
            let name = &names[&v["counter_id"]["handle"].as_u64().unwrap()];
            let value = v["value"].as_f64().unwrap();
            assert!(
                close(value, per_dispatch[&id][name]),
                "{id} {name}: {value}"
            );
        }
    }
    ok(
        &["replay", "out/results.json", "-d", "from-json", "-f", "csv"],
        tmp.path(),
    );
    let from_json = rows(&tmp.path().join("from-json/counter_collection.csv"));
    let values = |t: &[HashMap<String, String>]| {
        let mut v: Vec<(u64, String, String)> = t
            .iter()
            .map(|r| {
                (
                    num(r, "Dispatch_Id"),
                    r["Counter_Name"].clone(),
                    r["Counter_Value"].clone(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (a, b) = (values(&counters), values(&from_json));
    assert_eq!(a, b, "results.json replayed");
    std::fs::remove_file(out.join("results.json")).unwrap();
    std::fs::remove_file(&db).unwrap();
    ok(
        &["replay", "out", "-d", "replayed", "-f", "csv"],
        tmp.path(),
    );
    let replayed = rows(&tmp.path().join("replayed/counter_collection.csv"));
    let key = |r: &HashMap<String, String>| {
        (
            num(r, "Dispatch_Id"),
            r["Kernel_Name"].clone(),
            r["Counter_Name"].clone(),
            r["Counter_Value"].clone(),
            r["Start_Timestamp"].clone(),
        )
    };
    let mut a: Vec<_> = counters.iter().map(key).collect();
    let mut b: Vec<_> = replayed.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

#[test]
fn an_input_file_runs_the_program_once_per_pass() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("input.txt"),
        "# rocprofv3's text input: a pass per line\npmc: SQ_WAVES GRBM_COUNT\npmc: TCC_HIT TCC_MISS\n",
    )
    .unwrap();
    let out = run(tmp.path(), "out", &["-i", "input.txt"]);
    for (dir, names) in [
        ("pmc_1", ["GRBM_COUNT", "SQ_WAVES"]),
        ("pmc_2", ["TCC_HIT", "TCC_MISS"]),
    ] {
        let rows = rows(&out.join(dir).join("counter_collection.csv"));
        let mut seen: Vec<String> = rows.iter().map(|r| r["Counter_Name"].clone()).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen, names, "{dir}");
    }
}

/// The recorder test plugin's rows per table (`recorder.json`'s `totals`).
fn recorded(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["totals"].clone()
}

#[test]
fn a_plugin_reads_the_counter_samples_live_and_in_a_replay_of_the_run() {
    plugins_dir(&["recorder"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = |placement: &str| {
        format!(
            "version = 1\n[output]\nformats = [\"csv\"]\n\n[[stage]]\nname = \"recorder\"\n\
             plugin = \"recorder\"\ndomains = [\"kernel_dispatch\"]\noutput = true\n{placement}"
        )
    };
    std::fs::write(tmp.path().join("app.toml"), chain("")).unwrap();
    std::fs::write(
        tmp.path().join("launcher.toml"),
        chain("placement = \"rocwasm\"\n"),
    )
    .unwrap();
    // In the application, the chain's buffer counts; in the launcher, the
    // stage reads the run's journal. Either way every sample reaches it,
    // and the outputs have each once.
    let mut counts = Vec::new();
    for (file, out) in [("app.toml", "app"), ("launcher.toml", "launcher")] {
        let out = run(
            tmp.path(),
            out,
            &["-c", file, "--pmc", "SQ_WAVES", "GRBM_COUNT"],
        );
        let live = recorded(&out.join("recorder.json"));
        let samples = rows(&out.join("counter_collection.csv")).len() as u64;
        assert!(samples > 0);
        assert_eq!(live["counter-samples"], samples, "{file}: {live}");
        counts.push(samples);
    }
    assert_eq!(counts[0], counts[1]);
    ok(
        &[
            "replay",
            "app/counter_collection.csv",
            "-c",
            "app.toml",
            "-d",
            "replayed",
        ],
        tmp.path(),
    );
    let replayed = recorded(&tmp.path().join("replayed/recorder.json"));
    assert_eq!(replayed["counter-samples"], counts[0], "{replayed}");
}

/// A `kernel-filter` transform in front of the outputs: the counter samples
/// of the dispatches it drops go with them, so `counter_collection.csv`
/// names exactly the kernels `kernel_trace.csv` keeps.
#[test]
fn a_kernel_filter_drops_the_counters_of_the_dispatches_it_drops() {
    plugins_dir(&["kernel-filter"]);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("filter.toml"),
        "version = 1\n[output]\nformats = [\"csv\"]\ntrace = [\"kernel_dispatch\"]\n\n\
         [[stage]]\nname = \"scale-only\"\nplugin = \"kernel-filter\"\nkind = \"transform\"\n\
         domains = [\"kernel_dispatch\"]\nconfig = { pattern = \"*scale*\" }\non_failure = \"abort\"\n",
    )
    .unwrap();
    let out = run(
        tmp.path(),
        "out",
        &["-c", "filter.toml", "--pmc", "SQ_WAVES", "GRBM_COUNT"],
    );
    let kernels = rows(&out.join("kernel_trace.csv"));
    let counters = rows(&out.join("counter_collection.csv"));
    assert!(!kernels.is_empty());
    assert!(kernels.iter().all(|k| k["Kernel_Name"].contains("scale")));
    assert_eq!(counters.len(), 2 * kernels.len());
    let dispatches: std::collections::BTreeSet<&str> =
        kernels.iter().map(|k| k["Dispatch_Id"].as_str()).collect();
    assert!(counters
        .iter()
        .all(|c| dispatches.contains(c["Dispatch_Id"].as_str())));
}

/// A C tool counting through the SDK's three counting services (callback
/// and buffered dispatch counting, device counting), in the same run as
/// `--pmc`: each dispatch's sums over the instances equal
/// `counter_collection.csv`'s values, the device's equal the file's sum
/// over every dispatch, info version 1 gives the instances the records
/// come in, and a set over the TCC's registers is refused with
/// EXCEEDS_HW_LIMIT.
#[test]
fn a_c_tool_counts_through_the_sdks_counting_services_as_the_csv_does() {
    let tmp = tempfile::tempdir().unwrap();
    let library = super::native_tools::build_c_library(
        tmp.path(),
        &workspace().join("examples/native-tools/counting/counting.c"),
        "libcounting.so",
    );
    let written = tmp.path().join("counting.txt");
    // DOUBLE_WAVES is the tool's own counter (rocprofiler_create_counter).
    let counters = "SQ_WAVES GRBM_GUI_ACTIVE SQ_INSTS_VALU DOUBLE_WAVES";
    let out = super::native_tools::run_multi_kernel(
        tmp.path(),
        &["--pmc", "SQ_WAVES", "GRBM_GUI_ACTIVE", "SQ_INSTS_VALU"],
        &[
            ("ROCP_TOOL_LIBRARIES", library.to_str().unwrap()),
            ("COUNTING_OUT", written.to_str().unwrap()),
            ("COUNTING_COUNTERS", counters),
            ("COUNTING_CREATE", "DOUBLE_WAVES=2*SQ_WAVES"),
        ],
    );
    assert_success(&out, "rocwasm run --sim --pmc with the counting tool");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(!text.contains("error"), "{text}");

    // (dispatch, counter) → value, from the CSV and from each service.
    let csv: BTreeMap<(u64, String), f64> = rows(&tmp.path().join("out/counter_collection.csv"))
        .iter()
        .map(|r| ((num(r, "Dispatch_Id"), r["Counter_Name"].clone()), value(r)))
        .collect();
    assert_eq!(csv.len() % 3, 0);
    assert!(csv.len() >= 3 * 8, "{} rows", csv.len());
    let mut by_service: BTreeMap<&str, BTreeMap<(u64, String), f64>> = BTreeMap::new();
    let mut instances = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "callback" | "buffered" => {
                let key = (f[1].parse::<u64>().unwrap(), f[2].to_string());
                let v: f64 = f[3].parse().unwrap();
                assert!(
                    by_service.entry(f[0]).or_default().insert(key, v).is_none(),
                    "{line}: twice"
                );
                instances.insert(f[2].to_string(), f[4].parse::<usize>().unwrap());
            }
            _ => {}
        }
    }
    for service in ["callback", "buffered"] {
        let got = &by_service[service];
        assert_eq!(
            got.len(),
            csv.len() / 3 * 4,
            "{service}: every dispatch and counter"
        );
        for (key, v) in got {
            // The tool's own counter: twice the dispatch's SQ_WAVES.
            let expected = match key.1.as_str() {
                "DOUBLE_WAVES" => 2.0 * csv[&(key.0, "SQ_WAVES".to_string())],
                _ => csv[key],
            };
            assert!(
                (v - expected).abs() <= 1e-6 * expected.abs().max(1.0),
                "{service} {key:?}: {v} against the CSV's {expected}"
            );
        }
    }

    // The device's counters over the run: the sum over every dispatch,
    // once sampled into an array and once into its buffer.
    for what in ["device", "device-buffer"] {
        for name in ["SQ_WAVES", "GRBM_GUI_ACTIVE", "SQ_INSTS_VALU"] {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{what} ")) && l.split(' ').nth(2) == Some(name))
                .unwrap_or_else(|| panic!("no {what} line for {name}:\n{text}"));
            let v: f64 = line.split(' ').nth(3).unwrap().parse().unwrap();
            let expected: f64 = csv
                .iter()
                .filter(|((_, n), _)| n == name)
                .map(|(_, v)| v)
                .sum();
            assert!(
                (v - expected).abs() <= 1e-6 * expected.max(1.0),
                "{what} {name}: {v} against the CSV's sum {expected}"
            );
        }
    }

    // Records come per instance, as info version 1 lists them: SQ_WAVES
    // per shader engine on gfx90a (8), GRBM_GUI_ACTIVE once.
    let info: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("info "))
        .filter_map(|l| l.split_once(' '))
        .collect();
    assert!(
        info["SQ_WAVES"].contains("DIMENSION_SHADER_ENGINE[0:7]"),
        "{}",
        info["SQ_WAVES"]
    );
    for (name, n) in &instances {
        assert!(
            info[name.as_str()].contains(&format!("instances={n} ")),
            "{name}: {n} records a dispatch, info says {}",
            info[name.as_str()]
        );
    }
    assert_eq!(instances["SQ_WAVES"], 8);
    assert!(
        text.contains("over-limit 5 ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT"),
        "{text}"
    );
    for line in [
        "created DOUBLE_WAVES ROCPROFILER_STATUS_SUCCESS",
        "duplicate ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT",
        "bad-expression ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}:\n{text}");
    }
    // The reasons are said.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a counter of that name exists"), "{err}");
    assert!(err.contains("reduce(SQ_WAVES"), "{err}");
}

/// `--pmc` on the rocprofiler-sdk back end (rocwasm's own SDK here): the
/// SDK's dispatch counting collects the counters, and
/// `counter_collection.csv` holds what the built-in back end writes, row
/// for row: the same values per kernel, each row's dispatch, correlation
/// id and launching thread those of its `kernel_trace.csv` row.
#[test]
fn the_sdk_back_end_counts_through_the_sdks_dispatch_counting() {
    let tmp = tempfile::tempdir().unwrap();
    let flags = [
        "--pmc",
        "SQ_WAVES",
        "GRBM_GUI_ACTIVE",
        "GPU_UTIL",
        "--kernel-trace",
    ];
    let builtin = rows(&run(tmp.path(), "builtin", &flags).join("counter_collection.csv"));
    let mut sdk_flags = vec!["--backend", "rocprofiler-sdk"];
    sdk_flags.extend_from_slice(&flags);
    let out = run(tmp.path(), "sdk", &sdk_flags);
    let sdk = rows(&out.join("counter_collection.csv"));
    assert!(!sdk.is_empty());
    assert_eq!(by_kernel(&sdk), by_kernel(&builtin));
    let kernels = rows(&out.join("kernel_trace.csv"));
    let dispatches: HashMap<u64, &HashMap<String, String>> =
        kernels.iter().map(|k| (num(k, "Dispatch_Id"), k)).collect();
    assert_eq!(sdk.len(), kernels.len() * 3);
    for c in &sdk {
        let k = dispatches[&num(c, "Dispatch_Id")];
        for column in [
            "Kernel_Name",
            "Correlation_Id",
            "Thread_Id",
            "Start_Timestamp",
        ] {
            assert_eq!(c[column], k[column], "{column}: {c:?}");
        }
    }

    // The kernel options select the counters' dispatches as they select
    // the dispatches, each dispatch asked once (the iteration range counts
    // them): the same rows as the built-in back end's.
    let select = [
        "--pmc",
        "SQ_WAVES",
        "--kernel-include-regex",
        "scale",
        "--kernel-iteration-range",
        "[2-3]",
    ];
    let builtin =
        rows(&run(tmp.path(), "builtin-selected", &select).join("counter_collection.csv"));
    let mut sdk_select = vec!["--backend", "rocprofiler-sdk"];
    sdk_select.extend_from_slice(&select);
    let sdk = rows(&run(tmp.path(), "sdk-selected", &sdk_select).join("counter_collection.csv"));
    assert!(!builtin.is_empty());
    assert!(
        sdk.iter().all(|r| r["Kernel_Name"].contains("scale")),
        "{sdk:?}"
    );
    assert_eq!(by_kernel(&sdk), by_kernel(&builtin));
    assert_eq!(sdk.len(), builtin.len());
}

/// The stock `counter-stats` plugin (WIT 0.3.2, counter names from
/// `symbols.counter-names`): its `counter_stats.csv` has, per kernel name
/// and counter name, the dispatches and the mean, min, max and total of
/// `counter_collection.csv`'s values, computed here from the CSV; a replay
/// of the CSV through the same chain gives the same table.
#[test]
fn counter_stats_summarises_each_kernels_counters_live_and_in_a_replay() {
    plugins_dir(&["counter-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    // The example chain file, as the README shows it.
    let chain = workspace().join("examples/chains/counters.toml");
    std::fs::copy(&chain, tmp.path().join("chain.toml")).unwrap();
    let out = run(
        tmp.path(),
        "out",
        &[
            "-c",
            "chain.toml",
            "--pmc",
            "SQ_WAVES",
            "GRBM_GUI_ACTIVE",
            "GPU_UTIL",
        ],
    );
    let counters = rows(&out.join("counter_collection.csv"));
    let mut expected: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for c in &counters {
        expected
            .entry((c["Kernel_Name"].clone(), c["Counter_Name"].clone()))
            .or_default()
            .push(value(c));
    }
    let check = |stats: &[HashMap<String, String>], what: &str| {
        assert_eq!(stats.len(), expected.len(), "{what}: {stats:?}");
        for s in stats {
            let key = (s["Kernel"].clone(), s["Counter"].clone());
            let values = expected
                .get(&key)
                .unwrap_or_else(|| panic!("{what}: no {key:?} in the CSV"));
            let n = values.len() as f64;
            let total: f64 = values.iter().sum();
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(s["Dispatches"], values.len().to_string(), "{what} {key:?}");
            for (column, want) in [
                ("Mean", total / n),
                ("Min", min),
                ("Max", max),
                ("Total", total),
            ] {
                let got: f64 = s[column].parse().unwrap();
                assert!(
                    (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "{what} {key:?} {column}: {got} against {want}"
                );
            }
        }
    };
    let live = rows(&out.join("counter_stats.csv"));
    assert!(live.iter().any(|r| r["Counter"] == "GPU_UTIL"), "{live:?}");
    check(&live, "live");
    ok(
        &[
            "replay",
            "out/counter_collection.csv",
            "-c",
            "chain.toml",
            "-d",
            "replayed",
        ],
        tmp.path(),
    );
    check(
        &rows(&tmp.path().join("replayed/counter_stats.csv")),
        "replay",
    );
}

/// A replay's kernel options select the counter samples with their
/// dispatches, each dispatch asked once whichever file holds it first: the
/// replayed `counter_collection.csv` names exactly the replayed
/// `kernel_trace.csv`'s dispatches, and both equal a live run's with the
/// same options; `counter_collection.csv` replayed alone is selected alike.
#[test]
fn a_replays_kernel_options_select_the_counters_with_their_dispatches() {
    let tmp = tempfile::tempdir().unwrap();
    let counted = ["--pmc", "SQ_WAVES", "GRBM_COUNT", "--kernel-trace"];
    run(tmp.path(), "out", &counted);
    let select = [
        "--kernel-include-regex",
        "scale",
        "--kernel-iteration-range",
        "[2-3]",
    ];
    let mut live_flags = counted.to_vec();
    live_flags.extend_from_slice(&select);
    let live = rows(&run(tmp.path(), "live", &live_flags).join("counter_collection.csv"));
    assert!(!live.is_empty());
    assert!(live.iter().all(|r| r["Kernel_Name"].contains("scale")));

    let replay = |source: &str, dir: &str| {
        let mut args = vec!["replay", source, "-d", dir, "-f", "csv"];
        args.extend_from_slice(&select);
        ok(&args, tmp.path());
        tmp.path().join(dir)
    };
    let both = replay("out", "both");
    let counters = rows(&both.join("counter_collection.csv"));
    let kernels = rows(&both.join("kernel_trace.csv"));
    let ids = |t: &[HashMap<String, String>]| {
        let mut v: Vec<u64> = t.iter().map(|r| num(r, "Dispatch_Id")).collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(ids(&counters), ids(&kernels));
    assert_eq!(by_kernel(&counters), by_kernel(&live));
    let alone = rows(&replay("out/counter_collection.csv", "alone").join("counter_collection.csv"));
    assert_eq!(by_kernel(&alone), by_kernel(&live));
}

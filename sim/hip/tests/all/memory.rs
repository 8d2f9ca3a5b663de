//! Copies and stream-ordered allocation against the cost model: a probe
//! program (`tests/data/memory_probe.c`, against Debian's HIP headers)
//! makes pageable, pinned, registered and device-to-device copies and uses
//! `hipMallocAsync`/`hipFreeAsync`; the runtime's `ROCWASM_SIM_LOG` lines
//! show every copy the copy engine ran (bytes and ticks), grouped by the
//! probe's `PHASE` lines. The copy plans are the real runtime's
//! (sim/README.md, "Copies of pageable memory").

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::support::*;

const MIB: u64 = 1 << 20;

/// The default cost model: 1000 ns + bytes / 16 000 per µs.
fn copy_ns(bytes: u64) -> u64 {
    1000 + (bytes * 1000).div_ceil(16_000)
}

/// `fill` dispatches take 20 ms: work queued after one waits.
const SCENARIO: &str = "[[kernels.cost]]\nmatch = \"fill\"\nfixed_ns = 20000000\n";

fn probe() -> &'static PathBuf {
    static PROBE: OnceLock<PathBuf> = OnceLock::new();
    PROBE.get_or_init(|| {
        let dir = scratch("memory-probe");
        let bin = dir.join("memory_probe");
        let src =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/memory_probe.c");
        let out = std::process::Command::new("gcc")
            .args(["-D__HIP_PLATFORM_AMD__", "-O1", "-Wall", "-Werror"])
            .arg(&src)
            .arg("-o")
            .arg(&bin)
            .arg("-lamdhip64")
            // Cargo's library path holds a link stub of the HSA runtime;
            // the real libamdhip64's dependencies must resolve to Debian's.
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .expect("gcc is required");
        assert!(
            out.status.success(),
            "memory_probe.c does not build:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(dir.join("scenario.toml"), SCENARIO).unwrap();
        bin
    })
}

struct Run {
    stdout: String,
    stderr: String,
    /// Copies per phase: (bytes, duration in ticks), in order.
    copies: HashMap<String, Vec<(u64, u64)>>,
}

fn run_probe(args: &[&str], env: &[(&str, &str)]) -> Run {
    let bin = probe();
    let dir = sim_dir();
    let scenario = bin.parent().unwrap().join("scenario.toml");
    let co = dir.join("bin/vector_add_kernels.co");
    let out = std::process::Command::new("timeout")
        .args(["--kill-after=5", "60"])
        .arg(bin)
        .args(args)
        .env("LD_LIBRARY_PATH", dir.join("lib"))
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("ROCWASM_SIM_DEVICES")
        .env_remove("GPU_STAGING_BUFFER_SIZE")
        .env_remove("GPU_PINNED_MIN_XFER_SIZE")
        .env("ROCWASM_SIM_SCENARIO", &scenario)
        .env("ROCWASM_SIM_LOG", "1")
        .env("VECTOR_ADD_CO", &co)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    assert!(
        out.status.success(),
        "memory_probe {args:?} {env:?} failed:\n{stdout}\n{stderr}"
    );
    let mut copies: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
    let mut phase = String::from("start");
    for line in stderr.lines() {
        if let Some(p) = line.strip_prefix("PHASE ") {
            phase = p.to_string();
        } else if let Some(rest) = line.strip_prefix("sim-hsa: copy ") {
            // "<bytes> bytes ticks <start>..<end>"
            let words: Vec<&str> = rest.split_whitespace().collect();
            let bytes: u64 = words[0].parse().unwrap();
            let (start, end) = words[3].split_once("..").unwrap();
            let duration = end.parse::<u64>().unwrap() - start.parse::<u64>().unwrap();
            copies
                .entry(phase.clone())
                .or_default()
                .push((bytes, duration));
        }
    }
    Run {
        stdout,
        stderr,
        copies,
    }
}

impl Run {
    fn sizes(&self, phase: &str) -> Vec<u64> {
        self.copies
            .get(phase)
            .map(|c| c.iter().map(|&(b, _)| b).collect())
            .unwrap_or_default()
    }

    /// `key` of the first `tag` line that has it.
    fn field(&self, tag: &str, key: &str) -> u64 {
        self.stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{tag} ")))
            .map(line_fields)
            .find(|f| f.contains_key(key))
            .map(|f| num(&f, key))
            .unwrap_or_else(|| panic!("no {tag} line with {key} in:\n{}", self.stdout))
    }

    /// The checks every copy run passes, whatever the transfer settings.
    fn check_common(&self, bytes: u64) {
        for (phase, copies) in &self.copies {
            for &(b, d) in copies {
                assert_eq!(
                    d,
                    copy_ns(b),
                    "{phase}: a copy of {b} bytes follows the cost model"
                );
            }
        }
        for phase in ["pageable_h2d", "pageable_d2h"] {
            assert_eq!(
                self.sizes(phase).iter().sum::<u64>(),
                bytes,
                "{phase}: the pieces add up to the copy\n{}",
                self.stderr
            );
        }
        // Pinned, registered and device-to-device copies: one copy each.
        for phase in ["pinned_h2d", "d2d", "registered_d2h", "registered_h2d"] {
            assert_eq!(self.sizes(phase), vec![bytes], "{phase}\n{}", self.stderr);
        }
        // Host to host: the CPU's work, no copy engine.
        assert_eq!(self.sizes("h2h"), Vec::<u64>::new());
        // The small asynchronous copy (staged) and its read-back.
        assert_eq!(self.sizes("async_staged"), vec![4096, 4096]);
        assert_eq!(self.field("PAGEABLE", "equal"), 1);
        assert_eq!(self.field("REGISTERED", "device_pointer_ok"), 1);
        assert_eq!(self.field("REGISTERED", "equal"), 1);
        assert_eq!(self.field("REGISTERED", "again"), 1);
        assert_eq!(self.field("UNREGISTERED", "twice"), 1);
        assert_eq!(self.field("UNREGISTERED", "pointer"), 1);
        // Queued behind a 20 ms kernel, yet the bytes are those at the call.
        assert_eq!(self.field("SNAPSHOT", "queued"), 1);
        assert_eq!(self.field("SNAPSHOT", "first"), 0x11);
    }

    /// The runtime's own account of a pageable copy's plan.
    fn plans(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter_map(|l| l.strip_prefix("sim-hip: pageable copy "))
            .collect()
    }
}

#[test]
fn pageable_copies_up_to_128_mib_are_one_copy_by_default() {
    // Over 1 MiB: pinned in place, one copy each way.
    let bytes = 3 * MIB + 5;
    let run = run_probe(&["copies", &bytes.to_string()], &[]);
    run.check_common(bytes);
    assert_eq!(run.sizes("pageable_h2d"), vec![bytes]);
    assert_eq!(run.sizes("pageable_d2h"), vec![bytes]);
    assert_eq!(
        run.plans()[0],
        format!("{bytes} bytes to device: 1 pinned, 0 staged")
    );
    // Up to 1 MiB: through the staging buffer, still one copy.
    let bytes = 64 * 1024;
    let run = run_probe(&["copies", &bytes.to_string()], &[]);
    run.check_common(bytes);
    assert_eq!(run.sizes("pageable_h2d"), vec![bytes]);
    assert_eq!(
        run.plans()[0],
        format!("{bytes} bytes to device: 0 pinned, 1 staged")
    );
}

#[test]
fn staged_copies_are_chunked_by_the_staging_size() {
    // GPU_PINNED_MIN_XFER_SIZE=0 turns pinning off: every pageable copy is
    // staged, in chunks of GPU_STAGING_BUFFER_SIZE MiB.
    let bytes = 3 * MIB + MIB / 2;
    let run = run_probe(
        &["copies", &bytes.to_string()],
        &[
            ("GPU_PINNED_MIN_XFER_SIZE", "0"),
            ("GPU_STAGING_BUFFER_SIZE", "1"),
        ],
    );
    run.check_common(bytes);
    let chunks = vec![MIB, MIB, MIB, MIB / 2];
    assert_eq!(run.sizes("pageable_h2d"), chunks, "ceil(N / 1 MiB) copies");
    assert_eq!(run.sizes("pageable_d2h"), chunks);
}

#[test]
fn large_pageable_copies_are_pinned_in_chunks() {
    // GPU_PINNED_MIN_XFER_SIZE=1: pinned 1 MiB at a time (the default is
    // 128 MiB); the first chunk ends on a page boundary of the host memory.
    let bytes = 3 * MIB + MIB / 2;
    let run = run_probe(
        &["copies", &bytes.to_string()],
        &[("GPU_PINNED_MIN_XFER_SIZE", "1")],
    );
    run.check_common(bytes);
    let ptrs = fields(&run.stdout, "PTRS");
    let expected = |host: u64| {
        let partial = host % 4096;
        let first = (MIB + partial).div_ceil(4096) * 4096 - partial;
        let mut chunks = vec![first];
        let mut done = first;
        while done < bytes {
            let len = MIB.min(bytes - done);
            chunks.push(len);
            done += len;
        }
        chunks
    };
    assert_eq!(run.sizes("pageable_h2d"), expected(num(&ptrs, "src")));
    assert_eq!(run.sizes("pageable_d2h"), expected(num(&ptrs, "back")));
    assert_eq!(run.sizes("pageable_h2d").len(), 4);
}

#[test]
fn malloc_async_and_free_async_are_stream_ordered() {
    let run = run_probe(&["pool"], &[]);
    let bytes = 4096 * 4;
    assert_eq!(
        run.field("KERNEL", "used_async_memory"),
        1,
        "{}",
        run.stderr
    );
    let pool = |tag: &str| {
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("POOL {tag} ")))
            .unwrap_or_else(|| panic!("no POOL {tag} in {}", run.stdout));
        let f = line_fields(line);
        (num(&f, "reserved"), num(&f, "used"))
    };
    assert_eq!(pool("allocated"), (3 * bytes, 3 * bytes));
    assert_eq!(run.field("REUSE", "same_stream"), 1);
    // A sync gives freed memory back (release threshold 0) ...
    assert_eq!(pool("synchronized"), (0, 0));
    // ... unless the threshold keeps it; trimming then does.
    assert_eq!(pool("kept"), (bytes, 0));
    assert_eq!(pool("trimmed"), (0, 0));
    assert_eq!(run.field("REUSE", "other_stream_before_free"), 0);
    assert_eq!(pool("device_synchronized"), (0, 0));
    assert_eq!(run.field("PLAIN", "free_async"), 1);
    assert_eq!(run.field("HIGH", "used"), 3 * bytes);
}

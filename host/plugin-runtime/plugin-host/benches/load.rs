//! Plugin load time: a cold compile (empty cache) against a warm load from
//! the compiled-component cache, for one plugin (the Rust stock
//! `kernel-stats` by default).
//!
//! ```text
//! cargo xtask build-plugins
//! cargo bench -p rocwasm-plugin-host --bench load
//! cargo bench -p rocwasm-plugin-host --bench load -- --plugin target/plugins/api-stats.wasm --cold 3 --warm 20 --json
//! ```
//!
//! Each load is one [`PluginEngine::compile`] on a fresh engine (what a new
//! process does for each stage: read the file, digest it, compile it or load
//! it from the cache, link it against its world): **cold** with a cache
//! directory that is empty (the compiled code is then stored, and that store
//! is timed too), **warm** with the cache the cold runs filled, as a later
//! run finds it: the bench first waits until the last artifact is older
//! than [`SETTLED`], so the first warm load reads and checks the artifact
//! and remembers its checksum, and the later ones (the median) find it
//! remembered, as every run after a user's second does (see the cache's
//! module docs). For reference, the same run times wasmtime's own
//! `Component::new` on the same bytes and engine (the compiler alone: no
//! digest, cache or linking).
//! Creating the engine (its ticker thread, linkers) is timed apart.
//!
//! Prints medians (and best) in milliseconds; `--json` prints one JSON
//! object instead (what `cargo xtask bench` reads). Timing lives here,
//! never in tests.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rocwasm_plugin_host::digest_memo::SETTLED;
use rocwasm_plugin_host::{EngineConfig, PluginEngine};

const COMMAND: &str = "cargo bench -p rocwasm-plugin-host --bench load";

struct Options {
    plugin: PathBuf,
    cold: usize,
    warm: usize,
    json: bool,
}

fn options() -> Options {
    let mut o = Options {
        plugin: Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../target/plugins/kernel-stats.wasm"),
        cold: 3,
        warm: 20,
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> String {
            args.next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")))
        };
        match a.as_str() {
            "--plugin" => o.plugin = value("--plugin").into(),
            "--cold" => o.cold = number(&value("--cold")),
            "--warm" => o.warm = number(&value("--warm")),
            "--json" => o.json = true,
            // `cargo bench` passes `--bench` to every harness.
            "--bench" => {}
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    o
}

fn number(s: &str) -> usize {
    s.parse()
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| usage(&format!("`{s}` is not a positive number")))
}

fn usage(msg: &str) -> ! {
    eprintln!("{msg}\nusage: {COMMAND} -- [--plugin FILE] [--cold N] [--warm N] [--json]");
    std::process::exit(2)
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// (median, best) of samples.
fn summary(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0])
}

fn engine(cache: Option<&Path>) -> PluginEngine {
    PluginEngine::new(EngineConfig {
        cache_dir: cache.map(Path::to_path_buf),
        ..Default::default()
    })
    .expect("engine")
}

fn main() {
    let o = options();
    if !o.plugin.is_file() {
        eprintln!(
            "{} is missing: run `cargo xtask build-plugins` first",
            o.plugin.display()
        );
        std::process::exit(1);
    }
    let bytes = std::fs::read(&o.plugin).expect("reading the plugin");
    let work = tempfile::tempdir().expect("temp dir");

    // The compiler alone, for reference (one engine; nothing cached).
    let mut raw = Vec::new();
    let mut create = Vec::new();
    for _ in 0..o.cold {
        let t = Instant::now();
        let rt = engine(None);
        create.push(ms(t));
        let t = Instant::now();
        let component =
            wasmtime::component::Component::new(rt.engine(), &bytes).expect("compiling");
        raw.push(ms(t));
        std::hint::black_box(component);
    }

    // Cold: a fresh, empty cache directory each time.
    let mut cold = Vec::new();
    let mut cache = None;
    for i in 0..o.cold {
        let dir = work.path().join(format!("cache-{i}"));
        let rt = engine(Some(&dir));
        assert!(rt.cache().is_some(), "the cache could not be opened");
        let t = Instant::now();
        let plugin = rt.compile(&o.plugin).expect("compiling the plugin");
        cold.push(ms(t));
        assert!(!plugin.from_cache, "a cold load came from the cache");
        cache = Some(dir);
    }

    // Warm: the cache a cold run filled, a fresh engine each time, once
    // its artifact has settled (see the module docs).
    let cache = cache.expect("at least one cold run");
    std::thread::sleep(SETTLED);
    let mut warm = Vec::new();
    for _ in 0..o.warm {
        let rt = engine(Some(&cache));
        let t = Instant::now();
        let plugin = rt.compile(&o.plugin).expect("loading the plugin");
        warm.push(ms(t));
        assert!(plugin.from_cache, "a warm load did not come from the cache");
    }

    let (raw, raw_best) = summary(raw);
    let (create, create_best) = summary(create);
    let (cold, cold_best) = summary(cold);
    let (warm, warm_best) = summary(warm);
    let name = o
        .plugin
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if o.json {
        println!(
            "{}",
            serde_json::json!({
                "plugin": name,
                "bytes": bytes.len(),
                "cold_runs": o.cold,
                "warm_runs": o.warm,
                "cold_ms": cold,
                "warm_ms": warm,
                "compiler_ms": raw,
                "engine_ms": create,
            })
        );
        return;
    }
    println!("{COMMAND}");
    println!(
        "{name} ({} bytes): median (best) ms, {} cold and {} warm loads",
        bytes.len(),
        o.cold,
        o.warm
    );
    println!("  cold: PluginEngine::compile, empty cache     {cold:>9.2} ({cold_best:.2})");
    println!("  warm: PluginEngine::compile, from the cache  {warm:>9.2} ({warm_best:.2})");
    println!("  wasmtime Component::new alone (reference)   {raw:>9.2} ({raw_best:.2})");
    println!("  PluginEngine::new (not in the above)        {create:>9.2} ({create_best:.2})");
}

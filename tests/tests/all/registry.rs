//! Shipping plugins: `rocwasm plugin push/pull` to and from a real OCI
//! registry (Debian's `docker-registry`, started here on loopback and
//! stopped afterwards) and a directory store, and chains that name
//! `plugin = "oci://…"`: pulled, pinned by digest, cached per node,
//! admitted by the site policy, run live on the simulated runtime.
//!
//! Needs `cargo xtask build-plugins`, `cargo xtask build-sim` and the
//! `docker-registry` package (all installed/built by `cargo xtask test`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rocwasm_tests::*;

const REGISTRY: &str = "/usr/bin/docker-registry";

/// A `docker-registry serve` on a free loopback port, killed on drop.
struct Registry {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        assert!(
            Path::new(REGISTRY).is_file(),
            "{REGISTRY} is missing: install Debian's docker-registry (cargo xtask test does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new(REGISTRY)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting docker-registry");
        let registry = Registry {
            child,
            port,
            _dir: dir,
        };
        let started = Instant::now();
        while !registry.answers() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "docker-registry did not answer on 127.0.0.1:{port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `GET /v2/` answers 200.
    fn answers(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(b"GET /v2/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.starts_with("HTTP/1.1 200")
    }

    fn reference(&self, repo_tag: &str) -> String {
        format!("oci://127.0.0.1:{}/{repo_tag}", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `rocwasm` with this test's own node cache (`XDG_CACHE_HOME`).
fn rw(args: &[&str], dir: &Path, extra: &[(&str, &str)]) -> Output {
    let cache = dir.join("cache");
    let mut env = vec![("XDG_CACHE_HOME", cache.to_str().unwrap())];
    env.extend_from_slice(extra);
    rocwasm_with_env(args, dir, &env)
}

/// The value after `label` on the line that starts with it.
fn field(out: &Output, label: &str) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` line in: {}", text(out)))
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

fn push(file: &Path, reference: &str, dir: &Path) -> String {
    let out = rw(
        &["plugin", "push", file.to_str().unwrap(), reference],
        dir,
        &[],
    );
    assert_success(&out, "rocwasm plugin push");
    field(&out, "component:")
}

fn sha256_hex(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

/// A chain with one kernel-stats stage taken from `reference`, pinned to
/// `pin` if given.
fn chain(dir: &Path, name: &str, reference: &str, pin: Option<&str>) -> PathBuf {
    let pin = pin
        .map(|p| format!("sha256 = \"{}\"\n", p.trim_start_matches("sha256:")))
        .unwrap_or_default();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "version = 1\n[output]\nformats = [\"csv\"]\nsummary = true\n\n\
             [[stage]]\nname = \"stats\"\nplugin = \"{reference}\"\n{pin}domains = [\"kernel_dispatch\"]\n"
        ),
    )
    .unwrap();
    path
}

fn run_live(dir: &Path, chain: &Path, out_dir: &str, extra: &[(&str, &str)]) -> Output {
    let cache = dir.join("cache");
    let mut env = vec![("XDG_CACHE_HOME", cache.to_str().unwrap())];
    env.extend_from_slice(extra);
    let chain = ["-c", chain.to_str().unwrap()];
    run_sim_app(&chain, out_dir, "vector_add", &["2"], dir, &env)
}

fn stock(name: &str) -> PathBuf {
    plugins_dir(&[name]).join(format!("{name}.wasm"))
}

#[test]
fn push_pull_and_run_from_a_loopback_registry_pinned_by_digest() {
    let registry = Registry::start();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let stats = stock("kernel-stats");
    let reference = registry.reference("rocwasm/kernel-stats:1.0");

    // Push: the component digest printed is the file's SHA-256.
    let digest = push(&stats, &reference, dir);
    assert_eq!(digest, format!("sha256:{}", sha256_hex(&stats)));

    // Pull into this node's cache: byte-identical, and a second pull is a
    // cache hit (the registry is asked for the manifest, not the blob).
    let out = rw(
        &["plugin", "pull", "--out", "pulled.wasm", &reference],
        dir,
        &[],
    );
    assert_success(&out, "rocwasm plugin pull");
    assert_eq!(field(&out, "component:"), digest);
    assert!(
        !text(&out).contains("from this node's cache"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read(dir.join("pulled.wasm")).unwrap(),
        std::fs::read(&stats).unwrap()
    );
    let again = rw(&["plugin", "pull", &reference], dir, &[]);
    assert_success(&again, "second pull");
    assert!(
        text(&again).contains("from this node's cache"),
        "{}",
        text(&again)
    );

    // A chain naming the registry reference, pinned: runs live, and the
    // audit line says where the plugin came from and what it was.
    let pinned = chain(dir, "pinned.toml", &reference, Some(&digest));
    let out = run_live(dir, &pinned, "live", &[]);
    assert_success(&out, "rocwasm run with a shipped plugin");
    assert!(
        text(&out).contains("stats"),
        "the stage's summary: {}",
        text(&out)
    );
    let audit = std::fs::read_to_string(dir.join("live/rocwasm-audit.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(audit.trim()).unwrap();
    let p = &line["plugins"][0];
    assert_eq!(p["source"], reference.as_str(), "{line}");
    assert_eq!(
        p["digest"].as_str().unwrap().len(),
        "sha256:".len() + 64,
        "{line}"
    );
    assert!(
        p["wasm"]
            .as_str()
            .unwrap()
            .starts_with(dir.join("cache/rocwasm/pulled").to_str().unwrap()),
        "{line}"
    );

    // The tag moves to another component (api-stats): the pinned chain is
    // refused before the application starts, status 2, naming both digests.
    let moved = push(&stock("api-stats"), &reference, dir);
    assert_ne!(moved, digest);
    let out = run_live(dir, &pinned, "after-move", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains(&format!("now names component {moved}")),
        "{said}"
    );
    assert!(said.contains(&format!("not the pinned {digest}")), "{said}");
    assert!(
        said.contains("pinned.toml:"),
        "the chain file's position: {said}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("RESULT"),
        "the application must not run"
    );

    // With the registry gone, a pinned chain runs from the node's cache
    // (with a warning)...
    drop(registry);
    let out = run_live(dir, &pinned, "offline", &[]);
    assert_success(
        &out,
        "a pinned shipped plugin from the node's cache, registry stopped",
    );
    assert!(
        text(&out).contains("running the pinned component from this node's cache"),
        "{}",
        text(&out)
    );
    // ...but an unpinned one must ask the registry, and says it cannot.
    let unpinned = chain(dir, "unpinned.toml", &reference, None);
    let out = run_live(dir, &unpinned, "unpinned", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("the store cannot be reached"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_directory_store_works_the_same_way_and_the_policy_still_decides() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("shared/plugins/kernel-stats");
    let reference = format!("dir://{}:2", store.display());

    // Signed by the site key, pushed to the directory store.
    let key = dir.join("site");
    assert_success(
        &rw(
            &["plugin", "keygen", "--out", key.to_str().unwrap()],
            dir,
            &[],
        ),
        "keygen",
    );
    let signed = dir.join("kernel-stats.wasm");
    std::fs::copy(stock("kernel-stats"), &signed).unwrap();
    assert_success(
        &rw(
            &[
                "plugin",
                "sign",
                "--key",
                key.to_str().unwrap(),
                signed.to_str().unwrap(),
            ],
            dir,
            &[],
        ),
        "sign",
    );
    let digest = push(&signed, &reference, dir);
    // The store is an OCI image layout: the tag in index.json, blobs by digest.
    assert!(store.join("oci-layout").is_file());
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(store.join("index.json")).unwrap()).unwrap();
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        "2"
    );
    assert!(store
        .join("blobs/sha256")
        .join(digest.trim_start_matches("sha256:"))
        .is_file());

    // Under a policy trusting only the site key, the shipped signed plugin
    // runs; an unsigned one shipped the same way is refused.
    assert!(
        !Path::new("/etc/rocwasm/policy.toml").exists(),
        "needs a node without a system policy"
    );
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\n[plugins]\ntrusted_keys = [\"site.pub\"]\n",
    )
    .unwrap();
    let env = [("ROCWASM_TEST_POLICY", policy.to_str().unwrap())];
    let ok = chain(dir, "signed.toml", &reference, Some(&digest));
    let out = run_live(dir, &ok, "signed", &env);
    assert_success(&out, "a signed plugin from the directory store");

    let unsigned_ref = format!("dir://{}:1", dir.join("shared/plugins/unsigned").display());
    push(&stock("kernel-stats"), &unsigned_ref, dir);
    let refused = chain(dir, "unsigned.toml", &unsigned_ref, None);
    let out = run_live(dir, &refused, "unsigned", &env);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("rule `plugins.allow_unsigned`"),
        "{}",
        text(&out)
    );

    // A tampered cache entry is detected, reported and fetched again: the
    // run uses the store's bytes, never the damaged file.
    let cached = dir
        .join("cache/rocwasm/pulled/sha256")
        .join(format!("{}.wasm", digest.trim_start_matches("sha256:")));
    let mut bytes = std::fs::read(&cached).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&cached, &bytes).unwrap();
    let out = run_live(dir, &ok, "after-tamper", &env);
    assert_success(&out, "a run after the cache entry was damaged");
    assert!(
        text(&out).contains("was damaged and was fetched again"),
        "{}",
        text(&out)
    );
    assert_eq!(sha256_hex(&cached), digest.trim_start_matches("sha256:"));
}

#[test]
fn bad_references_and_non_components_are_one_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = rw(&["plugin", "pull", "oci://127.0.0.1:1/Bad_Repo"], dir, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("repository `Bad_Repo` is not valid"),
        "{}",
        text(&out)
    );

    let core = dir.join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let out = rw(
        &[
            "plugin",
            "push",
            core.to_str().unwrap(),
            &format!("dir://{}/s:1", dir.display()),
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("core.wasm is not a Wasm component"),
        "{}",
        text(&out)
    );

    // Nothing listens on port 1: a failure (status 1) naming the reference.
    let out = rw(
        &["plugin", "pull", "oci://127.0.0.1:1/rocwasm/x:1"],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("oci://127.0.0.1:1/rocwasm/x:1: the store cannot be reached"),
        "{}",
        text(&out)
    );
}

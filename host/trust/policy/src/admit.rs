//! Admission: may this run plan run under the site policy?
//!
//! [`admit`] reads every stage's component once, computes its digest and
//! checks its signatures, and holds the plan against each rule of the
//! policy. The first rule a plan breaks refuses it with one sentence that
//! names the plugin, the rule and the policy file. Without a policy every
//! plan is admitted, and the [`Admission`] still records what ran (digests,
//! signers) for the audit line.
//!
//! Callers: `rocwasm run`, `replay` and `check` before anything starts (a
//! refusal is exit status 2), and the pipeline itself, so a plan written
//! by hand and handed to the tool library cannot skip the check.

use std::fmt;
use std::path::PathBuf;

use rocwasm_core::BufferTracingKind;
use rocwasm_plan::{OutputGrant, RunPlan, Services, StagePlan};
use serde::Serialize;
use wasmparser::{Parser, Payload};

use crate::policy::SitePolicy;
use crate::signature::{KeyId, SignatureError, Signatures};

/// Why a plan may not run: one sentence, see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The policy file that refuses.
    pub policy: PathBuf,
    /// The stage (`None`: the run's own outputs).
    pub stage: Option<String>,
    /// The rule, as its key in the policy file (`limits.memory`).
    pub rule: &'static str,
    /// What the plan asks for that the rule does not allow.
    pub what: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.stage {
            Some(stage) => write!(f, "plugin `{stage}` is refused by the site policy: ")?,
            None => write!(f, "the run is refused by the site policy: ")?,
        }
        write!(
            f,
            "{} (rule `{}` in {})",
            self.what,
            self.rule,
            self.policy.display()
        )
    }
}

impl std::error::Error for Refusal {}

/// How a plugin was admitted.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AdmittedBy {
    /// No site policy applies.
    NoPolicy,
    /// Signed by this trusted key.
    TrustedKey(String),
    /// Its digest is listed in `plugins.allowed_digests`.
    AllowedDigest,
    /// `plugins.allow_unsigned = true`.
    AllowUnsigned,
}

/// One admitted stage, as the audit line records it.
#[derive(Debug, Clone, Serialize)]
pub struct AdmittedPlugin {
    /// The stage's name.
    pub stage: String,
    /// The component file.
    pub wasm: PathBuf,
    /// Its plugin digest (signatures excluded), `sha256:<hex>`.
    pub digest: String,
    /// Key ids whose signature verifies.
    pub signers: Vec<String>,
    /// How the policy admitted it.
    pub admitted_by: AdmittedBy,
    /// Whether the component imports WASI.
    pub wasi: bool,
    /// The synchronous services it is granted, decided: the chain's ask
    /// (or its silence) and the policy together, never `None`.
    pub services: Services,
}

/// A plan the policy admits, and what it admitted.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    /// The policy file and its digest, when one applies.
    pub policy: Option<(PathBuf, String)>,
    /// The site audit log the policy names.
    pub audit_log: Option<PathBuf>,
    /// The site's compiled-component cache the policy names.
    pub site_cache: Option<PathBuf>,
    /// Every stage, in chain order.
    pub plugins: Vec<AdmittedPlugin>,
    /// Whether native rocprofiler-sdk tools may be configured in the
    /// profiled process (the policy's `capabilities.native_tools`; true
    /// without a policy).
    pub native_tools: bool,
}

/// Holds `plan` against `policy` (see the module docs).
pub fn admit(plan: &RunPlan, policy: Option<&SitePolicy>) -> Result<Admission, Refusal> {
    let refuse = |stage: Option<&str>, rule: &'static str, what: String| Refusal {
        policy: policy.map(|p| p.file.clone()).unwrap_or_default(),
        stage: stage.map(str::to_string),
        rule,
        what,
    };
    if let Some(p) = policy {
        for &kind in &plan.output.kinds {
            if !p.allows_domain(kind) {
                return Err(refuse(
                    None,
                    domain_rule(p, kind),
                    format!("its outputs trace {}, which may not be traced", kind.name()),
                ));
            }
        }
    }
    let mut plugins = Vec::new();
    for stage in &plan.stages {
        let name = Some(stage.name.as_str());
        let bytes = match (std::fs::read(&stage.wasm), policy) {
            (Ok(bytes), _) => bytes,
            (Err(e), Some(_)) => {
                return Err(refuse(
                    name,
                    "plugins",
                    format!("{} cannot be read: {e}", stage.wasm.display()),
                ))
            }
            // No policy to hold it against: loading the stage reports the
            // missing file in its own words.
            (Err(_), None) => continue,
        };
        let signatures = Signatures::of(&bytes)
            .map_err(|e| refuse(name, "plugins", format!("{}: {e}", stage.wasm.display())))?;
        let imported = match imports(&bytes) {
            Ok(names) => names,
            // Unreadable imports: assume the worst under a policy (the
            // engine refuses a malformed component later anyway).
            Err(e) if policy.is_some() => {
                return Err(refuse(
                    name,
                    "capabilities.wasi",
                    format!("{}: its imports cannot be read: {e}", stage.wasm.display()),
                ))
            }
            Err(_) => Vec::new(),
        };
        let wasi = imported.iter().any(|i| i.starts_with("wasi:"));
        let admitted_by = match policy {
            None => AdmittedBy::NoPolicy,
            Some(p) => {
                let by = admitted_by(p, &signatures).map_err(|(rule, what)| {
                    refuse(name, rule, format!("{}: {what}", stage.wasm.display()))
                })?;
                check_stage(p, stage, wasi).map_err(|(rule, what)| refuse(name, rule, what))?;
                if let Some(i) = imported.iter().find(|i| !p.allows_wasi_import(i)) {
                    return Err(refuse(
                        name,
                        "capabilities.wasi_allow",
                        format!(
                            "{} imports {i}, which is not among the WASI interfaces a plugin may import",
                            stage.wasm.display()
                        ),
                    ));
                }
                if let Some(cap) = p.max_plugin_size.filter(|&c| bytes.len() as u64 > c) {
                    return Err(refuse(
                        name,
                        "limits.plugin_size",
                        format!(
                            "{} is {} bytes, more than the cap of {cap} bytes",
                            stage.wasm.display(),
                            bytes.len()
                        ),
                    ));
                }
                by
            }
        };
        plugins.push(AdmittedPlugin {
            stage: stage.name.clone(),
            wasm: stage.wasm.clone(),
            digest: signatures.digest.to_string(),
            signers: signatures
                .valid
                .iter()
                .map(|k| k.id().to_string())
                .collect(),
            admitted_by,
            wasi,
            services: decided_services(policy, &stage.services),
        });
    }
    Ok(Admission {
        policy: policy.map(|p| (p.file.clone(), p.digest.clone())),
        audit_log: policy.and_then(|p| p.audit_log.clone()),
        site_cache: policy.and_then(|p| p.site_cache.clone()),
        plugins,
        native_tools: policy.is_none_or(|p| p.native_tools),
    })
}

/// A trusted signature, an allowed digest, or `allow_unsigned`; a
/// signature that does not verify refuses in every case.
fn admitted_by(p: &SitePolicy, s: &Signatures) -> Result<AdmittedBy, (&'static str, String)> {
    match s.trusted_signer(&p.keys()) {
        Ok(id) => return Ok(AdmittedBy::TrustedKey(id.to_string())),
        Err(e @ SignatureError::Invalid(_)) => return Err(("plugins.trusted_keys", e.to_string())),
        Err(_) => {}
    }
    if p.allowed_digests.contains(&s.digest) {
        return Ok(AdmittedBy::AllowedDigest);
    }
    if p.allow_unsigned {
        return Ok(AdmittedBy::AllowUnsigned);
    }
    let signed = if s.valid.is_empty() {
        "not signed".to_string()
    } else {
        format!(
            "signed only by untrusted key(s) {}",
            key_list(&s.valid_ids())
        )
    };
    Err((
        "plugins.allow_unsigned",
        format!(
            "{signed}, and its digest {} is not in `plugins.allowed_digests`",
            s.digest
        ),
    ))
}

fn key_list(ids: &[KeyId]) -> String {
    ids.iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Signatures {
    fn valid_ids(&self) -> Vec<KeyId> {
        self.valid.iter().map(|k| k.id()).collect()
    }
}

/// The stage's limits, grants and domains against the policy's caps.
fn check_stage(p: &SitePolicy, s: &StagePlan, wasi: bool) -> Result<(), (&'static str, String)> {
    fn over<T: PartialOrd + fmt::Debug>(
        rule: &'static str,
        what: &str,
        asked: T,
        cap: Option<T>,
        show: impl Fn(&T) -> String,
    ) -> Result<(), (&'static str, String)> {
        match cap {
            Some(cap) if asked > cap => Err((
                rule,
                format!(
                    "asks for {what} {}, more than the cap of {}",
                    show(&asked),
                    show(&cap)
                ),
            )),
            _ => Ok(()),
        }
    }
    let bytes = |b: &u64| format!("{b} bytes");
    let time = |d: &std::time::Duration| format!("{d:?}");
    over(
        "limits.memory",
        "memory",
        s.limits.memory_bytes,
        p.max_memory,
        bytes,
    )?;
    over(
        "limits.deadline",
        "a deadline of",
        s.limits.deadline,
        p.max_deadline,
        time,
    )?;
    over(
        "limits.callback_deadline",
        "a callback deadline of",
        s.limits.callback_deadline,
        p.max_callback_deadline,
        time,
    )?;
    if s.output != OutputGrant::None {
        if !p.output {
            return Err((
                "capabilities.output",
                "asks for an output directory, which may not be granted".into(),
            ));
        }
        over(
            "limits.output_bytes",
            "an output quota of",
            s.limits.output_bytes,
            p.max_output_bytes,
            bytes,
        )?;
    }
    if s.services.callbacks == Some(true) && !p.callbacks {
        return Err((
            "capabilities.callbacks",
            "asks for callback tracing (plugin code on the application's threads), which may not be granted".into(),
        ));
    }
    if s.services.external_correlation == Some(true) && !p.external_correlation {
        return Err((
            "capabilities.external_correlation",
            "asks for external-correlation requests (plugin code on the application's threads), which may not be granted".into(),
        ));
    }
    if wasi && !p.wasi {
        return Err((
            "capabilities.wasi",
            format!(
                "{} imports WASI, which may not be granted",
                s.wasm.display()
            ),
        ));
    }
    for &kind in &s.domains {
        if !p.allows_domain(kind) {
            return Err((
                domain_rule(p, kind),
                format!("asks to trace {}, which may not be traced", kind.name()),
            ));
        }
    }
    Ok(())
}

/// What a stage is granted: what it did not withhold, less what the
/// policy withholds (an explicit ask the policy withholds never gets here:
/// [`check_stage`] refuses it).
fn decided_services(policy: Option<&SitePolicy>, asked: &Services) -> Services {
    let allows = |f: fn(&SitePolicy) -> bool| policy.is_none_or(f);
    Services {
        callbacks: Some(asked.callbacks_granted() && allows(|p| p.callbacks)),
        external_correlation: Some(
            asked.external_correlation_granted() && allows(|p| p.external_correlation),
        ),
    }
}

fn domain_rule(p: &SitePolicy, kind: BufferTracingKind) -> &'static str {
    if p.deny_domains.contains(&kind) {
        "domains.deny"
    } else {
        "domains.allow"
    }
}

/// The names a component imports at its top level (`wasi:cli/stderr@0.2.0`,
/// `rocwasm:plugin/profiler@0.1.0`); nested modules' imports are internal
/// wiring and not listed. An error when the binary cannot be parsed: a
/// caller deciding on capabilities must not read a truncated list as
/// "imports nothing".
pub fn imports(wasm: &[u8]) -> Result<Vec<String>, wasmparser::BinaryReaderError> {
    interfaces(wasm).map(|i| i.imports)
}

/// A component's top-level imports and exports, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interfaces {
    /// What it needs from its host (see [`imports`]).
    pub imports: Vec<String>,
    /// What it offers (`rocwasm:plugin/analysis@0.1.0`, …).
    pub exports: Vec<String>,
}

/// The top-level imports and exports of a component (nested components' and
/// modules' are internal wiring and not listed).
pub fn interfaces(wasm: &[u8]) -> Result<Interfaces, wasmparser::BinaryReaderError> {
    let mut found = Interfaces::default();
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(wasm) {
        match payload? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    found.imports.push(import?.name.name.to_string());
                }
            }
            Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    found.exports.push(export?.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::{sign, SecretKey};
    use rocwasm_plan::{
        BufferPolicy, BufferSettings, FailurePolicy, Limits, OutputPlan, PathTemplate, World,
    };
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::time::Duration;

    const WASI: &str = r#"(component (import "wasi:cli/stderr@0.2.0" (instance)))"#;
    const PLAIN: &str = r#"(component (import "rocwasm:plugin/log@0.1.0" (instance)))"#;

    fn stage(name: &str, wasm: &Path) -> StagePlan {
        StagePlan {
            name: name.into(),
            wasm: wasm.to_path_buf(),
            source: None,
            world: Some(World::Analysis),
            kinds: None,
            domains: vec![BufferTracingKind::KernelDispatch],
            operations: BTreeMap::new(),
            config: BTreeMap::new(),
            limits: Limits {
                memory_bytes: 64 << 20,
                deadline: Duration::from_millis(500),
                callback_deadline: Duration::from_millis(10),
                output_bytes: 1 << 20,
                log_per_second: 10,
            },
            failure: FailurePolicy::Disable,
            output: OutputGrant::None,
            services: Default::default(),
            placement: Default::default(),
        }
    }

    fn plan(stages: Vec<StagePlan>) -> RunPlan {
        RunPlan {
            version: RunPlan::VERSION,
            chain: None,
            output: OutputPlan {
                directory: PathTemplate::parse("/out").unwrap(),
                file_prefix: None,
                formats: vec![],
                stats: false,
                write: Default::default(),
                kinds: vec![BufferTracingKind::KernelDispatch],
                summary: false,
                api_args: false,
                parquet_root: None,
            },
            stages,
            buffer: BufferSettings {
                size: 1 << 20,
                watermark: 1 << 19,
                policy: BufferPolicy::Lossless,
            },
            plugin_cache: None,
            fork: Default::default(),
            api_log: false,
            command: vec![],
            kernels: Default::default(),
            collection: Default::default(),
            summary: Default::default(),
            journal: None,
        }
    }

    struct Site {
        dir: tempfile::TempDir,
    }

    impl Site {
        fn new() -> Site {
            Site {
                dir: tempfile::tempdir().unwrap(),
            }
        }
        fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
            let p = self.dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        }
        fn policy(&self, text: &str) -> SitePolicy {
            let p = self.file("policy.toml", format!("version = 1\n{text}").as_bytes());
            SitePolicy::load(&p).unwrap()
        }
    }

    fn refusal(plan: &RunPlan, policy: &SitePolicy) -> String {
        admit(plan, Some(policy)).unwrap_err().to_string()
    }

    #[test]
    fn without_a_policy_everything_is_admitted_and_recorded() {
        let site = Site::new();
        let wasm = site.file("a.wasm", &wat::parse_str(PLAIN).unwrap());
        let a = admit(&plan(vec![stage("a", &wasm)]), None).unwrap();
        assert_eq!(a.plugins[0].admitted_by, AdmittedBy::NoPolicy);
        assert!(a.plugins[0].digest.starts_with("sha256:"));
        assert!(a.policy.is_none());
    }

    #[test]
    fn signed_only_refuses_unsigned_and_untrusted_and_admits_trusted() {
        let site = Site::new();
        let (ours, theirs) = (
            SecretKey::generate().unwrap(),
            SecretKey::generate().unwrap(),
        );
        site.file("site.pub", ours.public().to_file_text().as_bytes());
        let policy = site.policy("[plugins]\ntrusted_keys = [\"site.pub\"]\n");
        let bytes = wat::parse_str(PLAIN).unwrap();

        let unsigned = site.file("u.wasm", &bytes);
        let e = refusal(&plan(vec![stage("u", &unsigned)]), &policy);
        assert!(e.contains("plugin `u`") && e.contains("not signed"), "{e}");
        assert!(
            e.contains("plugins.allow_unsigned") && e.contains("policy.toml"),
            "{e}"
        );

        let untrusted = site.file("t.wasm", &sign(&bytes, &theirs).unwrap());
        let e = refusal(&plan(vec![stage("t", &untrusted)]), &policy);
        assert!(e.contains(&theirs.public().id().to_string()), "{e}");

        let trusted = site.file("s.wasm", &sign(&bytes, &ours).unwrap());
        let a = admit(&plan(vec![stage("s", &trusted)]), Some(&policy)).unwrap();
        assert_eq!(
            a.plugins[0].admitted_by,
            AdmittedBy::TrustedKey(ours.public().id().to_string())
        );
        assert_eq!(a.plugins[0].signers, vec![ours.public().id().to_string()]);

        // Changed after signing: refused even though the key is trusted.
        let mut tampered = sign(&bytes, &ours).unwrap();
        let at = tampered.len() / 3;
        tampered[at] ^= 1;
        let bad = site.file("x.wasm", &tampered);
        assert!(admit(&plan(vec![stage("x", &bad)]), Some(&policy)).is_err());
    }

    #[test]
    fn an_allowed_digest_admits_an_unsigned_plugin() {
        let site = Site::new();
        let bytes = wat::parse_str(PLAIN).unwrap();
        let wasm = site.file("a.wasm", &bytes);
        let digest = Signatures::of(&bytes).unwrap().digest;
        let policy = site.policy(&format!("[plugins]\nallowed_digests = [\"{digest}\"]\n"));
        let a = admit(&plan(vec![stage("a", &wasm)]), Some(&policy)).unwrap();
        assert_eq!(a.plugins[0].admitted_by, AdmittedBy::AllowedDigest);
    }

    #[test]
    fn asking_for_more_than_the_caps_is_refused_naming_the_rule() {
        let site = Site::new();
        let wasm = site.file("a.wasm", &wat::parse_str(PLAIN).unwrap());
        let wasi = site.file("w.wasm", &wat::parse_str(WASI).unwrap());
        let policy = site.policy(
            "[plugins]\nallow_unsigned = true\n[limits]\nmemory = \"32MiB\"\ndeadline = \"100ms\"\n\
             output_bytes = \"1KiB\"\n[capabilities]\nwasi = false\n[domains]\ndeny = [\"HSA_CORE_API\"]\n",
        );
        let mut memory = stage("m", &wasm);
        memory.limits.deadline = Duration::from_millis(50);
        assert!(refusal(&plan(vec![memory]), &policy).contains("rule `limits.memory`"));

        let mut deadline = stage("d", &wasm);
        deadline.limits.memory_bytes = 1 << 20;
        let e = refusal(&plan(vec![deadline.clone()]), &policy);
        assert!(e.contains("rule `limits.deadline`"), "{e}");

        deadline.limits.deadline = Duration::from_millis(50);
        let mut output = deadline.clone();
        output.output = OutputGrant::RunDirectory;
        assert!(refusal(&plan(vec![output]), &policy).contains("rule `limits.output_bytes`"));

        let mut domain = deadline.clone();
        domain.domains.push(BufferTracingKind::HsaCoreApi);
        let e = refusal(&plan(vec![domain]), &policy);
        assert!(
            e.contains("rule `domains.deny`") && e.contains("HSA_CORE_API"),
            "{e}"
        );

        let mut w = deadline.clone();
        w.wasm = wasi;
        assert!(refusal(&plan(vec![w]), &policy).contains("rule `capabilities.wasi`"));

        // Within every cap: admitted.
        assert!(admit(&plan(vec![deadline.clone()]), Some(&policy)).is_ok());

        // The component file itself.
        let small =
            site.policy("[plugins]\nallow_unsigned = true\n[limits]\nplugin_size = \"8B\"\n");
        let e = refusal(&plan(vec![deadline]), &small);
        assert!(e.contains("rule `limits.plugin_size`"), "{e}");

        // The run's own outputs are held to the domain rules too.
        let mut own = plan(vec![]);
        own.output.kinds.push(BufferTracingKind::HsaCoreApi);
        let e = refusal(&own, &policy);
        assert!(e.starts_with("the run is refused"), "{e}");
    }

    #[test]
    fn native_tools_are_allowed_unless_the_policy_says_no() {
        let site = Site::new();
        assert!(admit(&plan(vec![]), None).unwrap().native_tools);
        let open = site.policy("[plugins]\nallow_unsigned = true\n");
        assert!(admit(&plan(vec![]), Some(&open)).unwrap().native_tools);
        let closed =
            site.policy("[plugins]\nallow_unsigned = true\n[capabilities]\nnative_tools = false\n");
        assert!(!admit(&plan(vec![]), Some(&closed)).unwrap().native_tools);
    }

    #[test]
    fn synchronous_services_are_granted_unless_withheld_and_an_explicit_ask_is_refused() {
        let site = Site::new();
        let wasm = site.file("a.wasm", &wat::parse_str(PLAIN).unwrap());
        let silent = stage("a", &wasm);

        // No policy: granted unless the chain withholds them.
        let a = admit(&plan(vec![silent.clone()]), None).unwrap();
        assert!(a.plugins[0].services.callbacks_granted());
        let mut withheld = silent.clone();
        withheld.services.external_correlation = Some(false);
        let a = admit(&plan(vec![withheld]), None).unwrap();
        assert!(a.plugins[0].services.callbacks_granted());
        assert!(!a.plugins[0].services.external_correlation_granted());

        // A policy withholding both: a silent stage runs without them...
        let policy = site.policy(
            "[plugins]\nallow_unsigned = true\n[capabilities]\ncallbacks = false\nexternal_correlation = false\n",
        );
        let a = admit(&plan(vec![silent.clone()]), Some(&policy)).unwrap();
        assert_eq!(
            a.plugins[0].services,
            Services {
                callbacks: Some(false),
                external_correlation: Some(false)
            }
        );
        // ...and one that asks is refused, naming the rule.
        let mut asks = silent.clone();
        asks.services.callbacks = Some(true);
        let e = refusal(&plan(vec![asks]), &policy);
        assert!(e.contains("rule `capabilities.callbacks`"), "{e}");
        let mut asks = silent;
        asks.services.external_correlation = Some(true);
        let e = refusal(&plan(vec![asks]), &policy);
        assert!(
            e.contains("rule `capabilities.external_correlation`"),
            "{e}"
        );
    }

    #[test]
    fn wasi_imports_beyond_the_allowed_interfaces_are_refused() {
        let site = Site::new();
        let stderr_only = site.file("w.wasm", &wat::parse_str(WASI).unwrap());
        let sockets = site.file(
            "s.wasm",
            &wat::parse_str(
                r#"(component (import "wasi:cli/stderr@0.2.0" (instance)) (import "wasi:sockets/tcp@0.2.0" (instance)))"#,
            )
            .unwrap(),
        );
        let policy = site.policy(
            "[plugins]\nallow_unsigned = true\n[capabilities]\nwasi_allow = [\"wasi:cli\", \"wasi:io/streams\"]\n",
        );
        assert!(admit(&plan(vec![stage("w", &stderr_only)]), Some(&policy)).is_ok());
        let e = refusal(&plan(vec![stage("s", &sockets)]), &policy);
        assert!(
            e.contains("rule `capabilities.wasi_allow`")
                && e.contains("imports wasi:sockets/tcp@0.2.0"),
            "{e}"
        );
        assert!(policy.allows_wasi_import("wasi:io/streams@0.2.6"));
        assert!(!policy.allows_wasi_import("wasi:io/poll@0.2.6"));
        assert!(policy.allows_wasi_import("rocwasm:plugin/log@0.1.0"));
    }

    #[test]
    fn imports_are_read_at_the_top_level() {
        assert_eq!(
            imports(&wat::parse_str(WASI).unwrap()).unwrap(),
            vec!["wasi:cli/stderr@0.2.0".to_string()]
        );
        assert!(imports(b"not wasm").is_err());
    }
}

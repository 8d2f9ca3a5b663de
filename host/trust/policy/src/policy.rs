//! The site policy: what a cluster's admins allow plugins to be and to do
//! on their nodes, read from one TOML file.
//!
//! ```toml
//! version = 1
//!
//! [plugins]
//! allow_unsigned = false                    # default: false
//! trusted_keys = ["keys/site.pub"]          # KEY.pub files, relative to this file
//! allowed_digests = ["sha256:9f2c…"]        # plugin digests (signatures excluded)
//!
//! [limits]                                  # caps on what a chain may ask for
//! memory = "256MiB"
//! deadline = "2s"
//! callback_deadline = "10ms"
//! output_bytes = "64MiB"
//! plugin_size = "32MiB"                     # the component file
//!
//! [capabilities]                            # default: all true
//! output = true                             # an output directory grant
//! wasi = false                              # components that import WASI (Python, JS)
//! wasi_allow = ["wasi:cli", "wasi:io", "wasi:clocks", "wasi:random"]
//!                                           # the WASI packages or interfaces (`wasi:sockets/tcp`)
//!                                           # a component may import; default: all (the host links
//!                                           # a deny-all context either way). componentize-py and
//!                                           # componentize-js components import wasi:sockets and
//!                                           # wasi:filesystem even when unused.
//! callbacks = false                         # callback tracing: plugin code on the application's threads
//! external_correlation = false              # external-correlation requests (same)
//! native_tools = false                      # native rocprofiler-sdk tools (ROCP_TOOL_LIBRARIES or
//!                                           # linked in): native code, never sandboxed
//!
//! [domains]
//! deny = ["HSA_CORE_API", "HSA_AMD_EXT_API"]  # or allow = [...]
//!
//! [audit]
//! log = "/var/log/rocwasm/audit.jsonl"      # every run appends its audit line (relative: to this file)
//!
//! [cache]
//! site = "/var/cache/rocwasm/components"    # compiled components every user reads first; root
//!                                           # fills it (root-owned, mode 0755), users never write it
//! ```
//!
//! A plugin may run when it is signed by a trusted key, or its digest is
//! allowed, or `allow_unsigned = true`; a signature that does not verify
//! refuses it in every case. Keys are read when the policy is loaded, so a
//! missing or malformed key file is an error in the policy, with its place.
//!
//! # Where the policy comes from
//!
//! [`SYSTEM_POLICY`] (`/etc/rocwasm/policy.toml`), when it exists, is the
//! policy: no environment variable, flag or chain setting loosens or
//! replaces it. Without it, tests (and sites trying a policy out) may name
//! one with [`TEST_POLICY_ENV`]; naming one while the system policy exists
//! is an error, never a silent override. See [`SitePolicy::resolve`].
//!
//! Errors read like the chain file's: `FILE:LINE:COLUMN: message`, naming
//! the key.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rocwasm_config::units::{parse_duration, parse_size};
use rocwasm_config::{ConfigError, Location};
use rocwasm_core::BufferTracingKind;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use toml::Spanned;

use crate::signature::{PluginDigest, PublicKey};

/// The system policy's path. Compiled in: nothing at run time moves it.
pub const SYSTEM_POLICY: &str = "/etc/rocwasm/policy.toml";
/// Names a policy file when no system policy exists (tests, trials).
pub const TEST_POLICY_ENV: &str = "ROCWASM_TEST_POLICY";
/// The policy file format this build reads.
pub const FORMAT_VERSION: i64 = 1;

/// A loaded, validated site policy. See the module docs.
#[derive(Debug, Clone)]
pub struct SitePolicy {
    /// The file it was read from.
    pub file: PathBuf,
    /// `sha256:<hex>` of the file's bytes, for the audit line.
    pub digest: String,
    /// Whether plugins that are neither signed by a trusted key nor allowed
    /// by digest may run.
    pub allow_unsigned: bool,
    /// Keys whose signature admits a plugin, with the file each came from.
    pub trusted_keys: Vec<(PublicKey, PathBuf)>,
    /// Plugin digests admitted without a signature.
    pub allowed_digests: BTreeSet<PluginDigest>,
    /// Caps on a stage's limits (`None`: no cap).
    pub max_memory: Option<u64>,
    /// Cap on a stage's deadline.
    pub max_deadline: Option<Duration>,
    /// Cap on a stage's callback deadline.
    pub max_callback_deadline: Option<Duration>,
    /// Cap on a stage's output quota.
    pub max_output_bytes: Option<u64>,
    /// Cap on the component file's size.
    pub max_plugin_size: Option<u64>,
    /// Whether a stage may be granted an output directory.
    pub output: bool,
    /// Whether components that import WASI may run.
    pub wasi: bool,
    /// The WASI packages (`wasi:cli`) or interfaces (`wasi:sockets/tcp`) a
    /// component may import; `None`: all of them.
    pub wasi_allow: Option<Vec<String>>,
    /// Whether a stage may configure callback tracing.
    pub callbacks: bool,
    /// Whether a stage may configure external-correlation requests.
    pub external_correlation: bool,
    /// Whether native rocprofiler-sdk tools may run in profiled processes
    /// (`[capabilities] native_tools`; default true): they are native code
    /// in the application, outside any sandbox.
    pub native_tools: bool,
    /// Kinds that may be traced (`None`: all but `deny_domains`).
    pub allow_domains: Option<BTreeSet<BufferTracingKind>>,
    /// Kinds that may not be traced.
    pub deny_domains: BTreeSet<BufferTracingKind>,
    /// The site audit log every run appends its line to.
    pub audit_log: Option<PathBuf>,
    /// The site's compiled-component cache (read-only for users).
    pub site_cache: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    version: Option<Spanned<i64>>,
    #[serde(default)]
    plugins: RawPlugins,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    capabilities: RawCapabilities,
    #[serde(default)]
    domains: RawDomains,
    #[serde(default)]
    audit: RawAudit,
    #[serde(default)]
    cache: RawCache,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCache {
    site: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugins {
    allow_unsigned: Option<bool>,
    #[serde(default)]
    trusted_keys: Vec<Spanned<String>>,
    #[serde(default)]
    allowed_digests: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    memory: Option<Spanned<String>>,
    deadline: Option<Spanned<String>>,
    callback_deadline: Option<Spanned<String>>,
    output_bytes: Option<Spanned<String>>,
    plugin_size: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCapabilities {
    output: Option<bool>,
    wasi: Option<bool>,
    wasi_allow: Option<Vec<Spanned<String>>>,
    callbacks: Option<bool>,
    external_correlation: Option<bool>,
    native_tools: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDomains {
    allow: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    log: Option<String>,
}

/// Turns byte spans of one policy file into `FILE:LINE:COLUMN` errors.
struct At<'a> {
    file: &'a Path,
    text: &'a str,
}

impl At<'_> {
    fn error(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError::At {
            file: self.file.to_path_buf(),
            at: Location::of_offset(self.text, span.start),
            message: message.into(),
        }
    }
}

/// `capabilities.wasi_allow` entries: `wasi:PACKAGE` or
/// `wasi:PACKAGE/INTERFACE`, without a version.
fn wasi_names(at: &At<'_>, list: &[Spanned<String>]) -> Result<Vec<String>, ConfigError> {
    list.iter()
        .map(|s| {
            let name = s.get_ref();
            let word = |w: &str| {
                !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            };
            let ok = name.strip_prefix("wasi:").is_some_and(|rest| match rest.split_once('/') {
                Some((package, interface)) => word(package) && word(interface),
                None => word(rest),
            });
            if ok {
                Ok(name.clone())
            } else {
                Err(at.error(
                    s.span(),
                    format!("key `capabilities.wasi_allow`: `{name}` is not `wasi:PACKAGE` or `wasi:PACKAGE/INTERFACE` (no version)"),
                ))
            }
        })
        .collect()
}

impl SitePolicy {
    /// Whether the component import `import` (`wasi:sockets/tcp@0.2.0`)
    /// is allowed by `wasi_allow`. Non-WASI imports are not its business.
    pub fn allows_wasi_import(&self, import: &str) -> bool {
        let Some(allow) = &self.wasi_allow else {
            return true;
        };
        if !import.starts_with("wasi:") {
            return true;
        }
        let unversioned = import.split('@').next().unwrap_or(import);
        let package = unversioned.split('/').next().unwrap_or(unversioned);
        allow.iter().any(|a| a == unversioned || a == package)
    }

    /// The policy in force: the system policy if it exists; else the file
    /// `test_override` names (the [`TEST_POLICY_ENV`] value); else none.
    /// Naming an override while a system policy exists is an error: a user
    /// cannot replace the site's rules, and is told so rather than ignored.
    pub fn resolve(
        system: &Path,
        test_override: Option<&Path>,
    ) -> Result<Option<SitePolicy>, ConfigError> {
        if system.exists() {
            if let Some(other) = test_override {
                return Err(ConfigError::Invalid {
                    message: format!(
                        "{TEST_POLICY_ENV}={} cannot replace the system policy {}: \
                         on a node with a system policy, only that policy applies",
                        other.display(),
                        system.display()
                    ),
                });
            }
            return SitePolicy::load(system).map(Some);
        }
        test_override.map(SitePolicy::load).transpose()
    }

    /// [`SitePolicy::resolve`] with [`SYSTEM_POLICY`] and the environment.
    pub fn current() -> Result<Option<SitePolicy>, ConfigError> {
        let over = std::env::var_os(TEST_POLICY_ENV).map(PathBuf::from);
        SitePolicy::resolve(Path::new(SYSTEM_POLICY), over.as_deref())
    }

    /// Reads and validates a policy file.
    pub fn load(path: &Path) -> Result<SitePolicy, ConfigError> {
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Invalid {
            message: format!("{}: cannot read the site policy: {source}", path.display()),
        })?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut policy = SitePolicy::parse(&text, path)?;
        policy.digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
        Ok(policy)
    }

    /// Parses policy text; relative key paths are resolved against the
    /// directory of `file`.
    pub fn parse(text: &str, file: &Path) -> Result<SitePolicy, ConfigError> {
        let at = At { file, text };
        let raw: RawPolicy = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let message = e.message().lines().next().unwrap_or("").trim().to_string();
            at.error(span, format!("invalid site policy: {message}"))
        })?;
        match &raw.version {
            Some(v) if *v.get_ref() == FORMAT_VERSION => {}
            Some(v) => {
                return Err(at.error(
                    v.span(),
                    format!(
                        "key `version`: unsupported policy format {} (this rocwasm reads {FORMAT_VERSION})",
                        v.get_ref()
                    ),
                ))
            }
            None => {
                return Err(at.error(
                    0..0,
                    format!("missing `version = {FORMAT_VERSION}` at the top of the policy"),
                ))
            }
        }
        let base = file.parent().unwrap_or(Path::new("."));
        let mut trusted_keys = Vec::new();
        for k in &raw.plugins.trusted_keys {
            let path = base.join(k.get_ref());
            let key = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| PublicKey::parse(&t).map_err(|e| e.to_string()))
                .map_err(|e| {
                    at.error(
                        k.span(),
                        format!("key `plugins.trusted_keys`: {}: {e}", path.display()),
                    )
                })?;
            trusted_keys.push((key, path));
        }
        let mut allowed_digests = BTreeSet::new();
        for d in &raw.plugins.allowed_digests {
            let digest = PluginDigest::parse(d.get_ref()).ok_or_else(|| {
                at.error(
                    d.span(),
                    "key `plugins.allowed_digests`: expected `sha256:` and 64 hex digits",
                )
            })?;
            allowed_digests.insert(digest);
        }
        let size = |v: &Option<Spanned<String>>, key: &str| {
            v.as_ref()
                .map(|s| {
                    parse_size(s.get_ref())
                        .map_err(|e| at.error(s.span(), format!("key `limits.{key}`: {e}")))
                })
                .transpose()
        };
        let duration = |v: &Option<Spanned<String>>, key: &str| {
            v.as_ref()
                .map(|s| {
                    parse_duration(s.get_ref())
                        .map_err(|e| at.error(s.span(), format!("key `limits.{key}`: {e}")))
                })
                .transpose()
        };
        let kinds = |list: &[Spanned<String>], key: &str| {
            list.iter()
                .map(|s| {
                    BufferTracingKind::from_name(s.get_ref()).ok_or_else(|| {
                        at.error(
                            s.span(),
                            format!(
                                "key `domains.{key}`: unknown domain `{}` (see `rocwasm kinds`)",
                                s.get_ref()
                            ),
                        )
                    })
                })
                .collect::<Result<BTreeSet<_>, _>>()
        };
        Ok(SitePolicy {
            file: file.to_path_buf(),
            digest: String::new(),
            allow_unsigned: raw.plugins.allow_unsigned.unwrap_or(false),
            trusted_keys,
            allowed_digests,
            max_memory: size(&raw.limits.memory, "memory")?,
            max_deadline: duration(&raw.limits.deadline, "deadline")?,
            max_callback_deadline: duration(&raw.limits.callback_deadline, "callback_deadline")?,
            max_output_bytes: size(&raw.limits.output_bytes, "output_bytes")?,
            max_plugin_size: size(&raw.limits.plugin_size, "plugin_size")?,
            output: raw.capabilities.output.unwrap_or(true),
            wasi: raw.capabilities.wasi.unwrap_or(true),
            wasi_allow: raw
                .capabilities
                .wasi_allow
                .as_deref()
                .map(|l| wasi_names(&at, l))
                .transpose()?,
            callbacks: raw.capabilities.callbacks.unwrap_or(true),
            external_correlation: raw.capabilities.external_correlation.unwrap_or(true),
            native_tools: raw.capabilities.native_tools.unwrap_or(true),
            allow_domains: raw
                .domains
                .allow
                .as_deref()
                .map(|l| kinds(l, "allow"))
                .transpose()?,
            deny_domains: kinds(&raw.domains.deny, "deny")?,
            audit_log: raw.audit.log.map(|l| base.join(l)),
            site_cache: raw.cache.site.map(|d| base.join(d)),
        })
    }

    /// The trusted keys alone.
    pub fn keys(&self) -> Vec<PublicKey> {
        self.trusted_keys.iter().map(|(k, _)| k.clone()).collect()
    }

    /// Whether `kind` may be traced.
    pub fn allows_domain(&self, kind: BufferTracingKind) -> bool {
        !self.deny_domains.contains(&kind)
            && self
                .allow_domains
                .as_ref()
                .is_none_or(|a| a.contains(&kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SitePolicy, String> {
        SitePolicy::parse(text, Path::new("/site/policy.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_full_policy_reads() {
        let p = parse(
            r#"version = 1
[plugins]
allow_unsigned = true
allowed_digests = ["sha256:0000000000000000000000000000000000000000000000000000000000000000"]
[limits]
memory = "64MiB"
deadline = "1s"
[capabilities]
wasi = false
[domains]
deny = ["HSA_CORE_API"]
[audit]
log = "/var/log/rocwasm.jsonl"
"#,
        )
        .unwrap();
        assert!(p.allow_unsigned && !p.wasi && p.output);
        assert_eq!(p.max_memory, Some(64 << 20));
        assert_eq!(p.max_deadline, Some(Duration::from_secs(1)));
        assert_eq!(p.allowed_digests.len(), 1);
        assert!(!p.allows_domain(BufferTracingKind::HsaCoreApi));
        assert!(p.allows_domain(BufferTracingKind::KernelDispatch));
    }

    #[test]
    fn defaults_are_signed_only_with_every_capability() {
        let p = parse("version = 1\n").unwrap();
        assert!(!p.allow_unsigned && p.output && p.wasi);
        assert!(p.trusted_keys.is_empty() && p.allowed_digests.is_empty());
    }

    #[test]
    fn malformed_policies_name_file_line_column_and_key() {
        let cases = [
            (
                "version = 1\n[limits]\nmemory = \"lots\"\n",
                "/site/policy.toml:3:10:",
                "limits.memory",
            ),
            (
                "version = 1\n[plugins]\nallow_unsigend = true\n",
                "/site/policy.toml:3:1:",
                "allow_unsigend",
            ),
            (
                "version = 1\n[domains]\ndeny = [\"HSA_API\"]\n",
                "/site/policy.toml:3:9:",
                "HSA_API",
            ),
            (
                "version = 1\n[plugins]\nallowed_digests = [\"abc\"]\n",
                "/site/policy.toml:3:20:",
                "allowed_digests",
            ),
            (
                "version = 1\n[plugins]\ntrusted_keys = [\"nokey.pub\"]\n",
                "/site/policy.toml:3:17:",
                "/site/nokey.pub",
            ),
            (
                "version = 1\n[capabilities]\nwasi_allow = [\"wasi:cli\", \"wasi:io@0.2.0\"]\n",
                "/site/policy.toml:3:27:",
                "capabilities.wasi_allow",
            ),
            ("version = 2\n", "/site/policy.toml:1:11:", "version"),
            (
                "[plugins]\n",
                "/site/policy.toml:1:1:",
                "missing `version = 1`",
            ),
        ];
        for (text, place, key) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(place), "{text:?}: {e}");
            assert!(e.contains(key), "{text:?}: {e}");
        }
    }

    #[test]
    fn an_existing_system_policy_cannot_be_overridden() {
        let dir = tempfile::tempdir().unwrap();
        let system = dir.path().join("policy.toml");
        let user = dir.path().join("mine.toml");
        std::fs::write(&user, "version = 1\n[plugins]\nallow_unsigned = true\n").unwrap();
        // No system policy: the override is the policy.
        let p = SitePolicy::resolve(&system, Some(&user)).unwrap().unwrap();
        assert!(p.allow_unsigned);
        assert!(p.digest.starts_with("sha256:"));
        // A system policy exists: the override is refused, with both names.
        std::fs::write(&system, "version = 1\n").unwrap();
        let e = SitePolicy::resolve(&system, Some(&user))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(TEST_POLICY_ENV) && e.contains("mine.toml"),
            "{e}"
        );
        assert!(e.contains(&system.display().to_string()), "{e}");
        // Without an override, the system policy applies.
        let p = SitePolicy::resolve(&system, None).unwrap().unwrap();
        assert!(!p.allow_unsigned);
        assert!(SitePolicy::resolve(&dir.path().join("none"), None)
            .unwrap()
            .is_none());
    }
}

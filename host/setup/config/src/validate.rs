//! [`RawChain`] → [`Chain`]: every semantic check of a chain file, in one
//! place, each failure a [`ConfigError`] at the offending key or value.
//!
//! Checks run in document order (settings, output, kernels, collection, summary, then each stage top to
//! bottom), so the error reported is the first a reader would meet.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rocwasm_core::{BufferPolicy, BufferTracingKind};
use toml::Spanned;

use crate::domains;
use crate::error::{ConfigError, Source};
use crate::model::*;
use crate::operations::{self, Lookup};
use crate::options::LoadOptions;
use crate::raw::*;
use crate::resolve;
use crate::units;

/// Smallest memory limit that can run anything: one Wasm page.
const MIN_MEMORY: u64 = 64 << 10;
/// Smallest buffer that holds a few of the largest records (184 B).
const MIN_BUFFER: u64 = 4 << 10;
const MAX_DELIVERY_THREADS: i64 = 64;
const MAX_RESTARTS: i64 = 1000;

pub(crate) struct Validator<'a> {
    pub src: Source<'a>,
    /// The chain file's directory: relative paths are joined to it.
    pub base: &'a Path,
    pub options: &'a LoadOptions,
}

impl Validator<'_> {
    pub fn chain(&self, raw: RawChain) -> Result<Chain, ConfigError> {
        let settings = self.settings(raw.settings.as_ref())?;
        let output = self.output(raw.output.as_ref())?;
        let kernels = self.kernels(raw.kernels.as_ref())?;
        let collection = self.collection(raw.collection.as_ref())?;
        let summary = self.summaries(raw.summary.as_ref())?;
        let mut stages = Vec::with_capacity(raw.stage.len());
        let mut names: HashMap<String, usize> = HashMap::new();
        for (i, stage) in raw.stage.iter().enumerate() {
            let built = self.stage(i, stage, &settings)?;
            if let Some(first) = names.insert(built.name.clone(), i) {
                let name = stage.get_ref().name.as_ref().expect("checked by stage()");
                return Err(self.src.error(
                    name.span(),
                    format!(
                        "duplicate stage name `{}` in [[stage]] #{} (already used by [[stage]] #{})",
                        built.name,
                        i + 1,
                        first + 1
                    ),
                ));
            }
            stages.push(built);
        }
        if stages.is_empty() && output.trace.is_empty() {
            return Err(self.src.error(
                self.src.text.len()..self.src.text.len(),
                "the chain is empty: add a [[stage]] table, or domains to `trace` in [output]",
            ));
        }
        self.transforms_feed_someone(&raw, &stages, &output)?;
        Ok(Chain {
            file: Some(self.src.file.to_path_buf()),
            settings,
            output,
            kernels,
            collection,
            summary,
            stages,
        })
    }

    fn settings(&self, raw: Option<&Spanned<RawSettings>>) -> Result<Settings, ConfigError> {
        let mut s = Settings {
            backend: rocwasm_plan::Backend::Builtin,
            buffer: BufferSettings {
                size: BufferSettings::DEFAULT_SIZE,
                watermark: percent_of(
                    BufferSettings::DEFAULT_SIZE,
                    BufferSettings::DEFAULT_WATERMARK_PERCENT,
                ),
                policy: BufferPolicy::Lossless,
            },
            delivery_threads: 1,
            plugin_cache: None,
            plugin_path: Vec::new(),
            limits: Limits::default(),
        };
        let Some(raw) = raw.map(Spanned::get_ref) else {
            return Ok(s);
        };
        if let Some(b) = raw.buffer.as_ref().map(Spanned::get_ref) {
            let here = "in [settings.buffer]";
            if let Some(size) = &b.size {
                s.buffer.size = self.size(size, "size", here)?;
                if s.buffer.size < MIN_BUFFER {
                    return Err(self.src.error(
                        size.span(),
                        format!("buffer `size` {here} must be at least 4KiB"),
                    ));
                }
            }
            s.buffer.watermark =
                percent_of(s.buffer.size, BufferSettings::DEFAULT_WATERMARK_PERCENT);
            if let Some(w) = &b.watermark {
                s.buffer.watermark = self.watermark(w, s.buffer.size)?;
            }
            if let Some(p) = &b.policy {
                s.buffer.policy = match self.choice(p, "policy", here, &["lossless", "discard"])? {
                    "lossless" => BufferPolicy::Lossless,
                    _ => BufferPolicy::Discard,
                };
            }
        }
        if let Some(b) = &raw.backend {
            let names: Vec<&str> = rocwasm_plan::Backend::ALL
                .iter()
                .map(|b| b.name())
                .collect();
            let name = self.choice(b, "backend", "in [settings]", &names)?;
            s.backend = rocwasm_plan::Backend::from_name(name).unwrap_or_default();
        }
        if let Some(t) = &raw.delivery_threads {
            if !(1..=MAX_DELIVERY_THREADS).contains(t.get_ref()) {
                return Err(self.src.error(
                    t.span(),
                    format!(
                        "`delivery_threads` in [settings] must be between 1 and {MAX_DELIVERY_THREADS} (found {})",
                        t.get_ref()
                    ),
                ));
            }
            s.delivery_threads = *t.get_ref() as u32;
        }
        if let Some(c) = &raw.plugin_cache {
            s.plugin_cache = Some(self.base.join(self.non_empty(
                c,
                "plugin_cache",
                "in [settings]",
            )?));
        }
        for dir in raw.plugin_path.iter().flatten() {
            s.plugin_path.push(self.base.join(self.non_empty(
                dir,
                "plugin_path",
                "in [settings]",
            )?));
        }
        if let Some(l) = &raw.limits {
            s.limits = self.limits(l.get_ref(), Limits::default(), "in [settings.limits]")?;
        }
        Ok(s)
    }

    fn output(&self, raw: Option<&Spanned<RawOutput>>) -> Result<Output, ConfigError> {
        let mut o = Output::default();
        let Some(raw) = raw.map(Spanned::get_ref) else {
            return Ok(o);
        };
        if let Some(d) = &raw.directory {
            o.directory = self.template(d, "directory")?;
        }
        if let Some(p) = &raw.file_prefix {
            o.file_prefix = Some(self.template(p, "file_prefix")?);
            if p.get_ref().contains('/') {
                return Err(self.src.error(
                    p.span(),
                    "`file_prefix` in [output] is a file name prefix and cannot contain `/` (use `directory`)",
                ));
            }
        }
        if let Some(formats) = &raw.formats {
            o.formats.clear();
            for f in formats {
                let Some(format) = OutputFormat::from_name(f.get_ref()) else {
                    let names: Vec<_> = OutputFormat::ALL.iter().map(|f| f.name()).collect();
                    return Err(self.src.error(
                        f.span(),
                        format!(
                            "unknown output format `{}` in [output] (expected one of: {})",
                            f.get_ref(),
                            names.join(", ")
                        ),
                    ));
                };
                if !o.formats.contains(&format) {
                    o.formats.push(format);
                }
            }
        }
        if let Some(trace) = &raw.trace {
            o.trace = self.domains(trace, "trace", "in [output]")?;
        }
        if let Some(s) = &raw.summary {
            o.summary = *s.get_ref();
        }
        if let Some(a) = &raw.api_args {
            o.api_args = *a.get_ref();
        }
        if let Some(l) = &raw.parquet_layout {
            o.parquet_layout = ParquetLayout::from_name(l.get_ref()).ok_or_else(|| {
                self.src.error(
                    l.span(),
                    format!(
                        "unknown `parquet_layout` value `{}` in [output] (expected `flat` or `hive`)",
                        l.get_ref()
                    ),
                )
            })?;
        }
        if let Some(w) = &raw.write {
            o.write = WriteTiming::from_name(w.get_ref()).ok_or_else(|| {
                let names: Vec<_> = WriteTiming::ALL
                    .iter()
                    .map(|t| format!("`{}`", t.name()))
                    .collect();
                self.src.error(
                    w.span(),
                    format!(
                        "unknown `write` value `{}` in [output] (expected {})",
                        w.get_ref(),
                        names.join(" or ")
                    ),
                )
            })?;
        }
        Ok(o)
    }

    fn stage(
        &self,
        index: usize,
        raw: &Spanned<RawStage>,
        settings: &Settings,
    ) -> Result<Stage, ConfigError> {
        let header = raw.span();
        let n = index + 1;
        let here = format!("in [[stage]] #{n}");
        let r = raw.get_ref();

        let Some(name) = &r.name else {
            return Err(self
                .src
                .error(header, format!("[[stage]] #{n} has no `name`")));
        };
        self.check_stage_name(name, &here)?;
        let Some(plugin) = &r.plugin else {
            return Err(self.src.error(
                header,
                format!(
                    "[[stage]] #{n} (`{}`) has no `plugin` (a .wasm path or a stock name)",
                    name.get_ref()
                ),
            ));
        };
        let sha256 = r
            .sha256
            .as_ref()
            .map(|d| self.digest(d, &here))
            .transpose()?;
        let plugin = self.plugin(
            plugin,
            &here,
            settings,
            r.sha256.as_ref().zip(sha256.as_deref()),
        )?;

        let kind = match &r.kind {
            None => World::Analysis,
            Some(k) => match self.choice(k, "kind", &here, &["analysis", "transform"])? {
                "analysis" => World::Analysis,
                _ => World::Transform,
            },
        };
        let domains = match &r.domains {
            Some(d) => self.domains(d, "domains", &here)?,
            None => Vec::new(),
        };
        let operations = match &r.operations {
            Some(ops) => self.operations(ops.get_ref(), &domains, &here)?,
            None => BTreeMap::new(),
        };
        let config = r
            .config
            .as_ref()
            .map(|c| flatten(c.get_ref()))
            .unwrap_or_default();
        let limits = match &r.limits {
            Some(l) => self.limits(
                l.get_ref(),
                settings.limits,
                &format!("in `limits` of [[stage]] #{n}"),
            )?,
            None => settings.limits,
        };
        let on_failure = self.failure_policy(r, &here)?;
        let output = match &r.output {
            Some(o) => self.grant(o, &here)?,
            None => OutputGrant::None,
        };
        let services = self.services(r, kind, &here)?;
        let placement = self.placement(r, kind, &here)?;
        Ok(Stage {
            name: name.get_ref().clone(),
            plugin,
            sha256,
            world: kind,
            domains,
            operations,
            config,
            limits,
            on_failure,
            output,
            services,
            placement,
        })
    }

    /// `placement`: where the stage runs. In the launcher a stage reads the
    /// record journal's batches only, so it must be an analysis that asks
    /// for no synchronous service.
    fn placement(&self, r: &RawStage, world: World, here: &str) -> Result<Placement, ConfigError> {
        let Some(p) = &r.placement else {
            return Ok(Placement::default());
        };
        let names: Vec<&str> = Placement::ALL.iter().map(|p| p.name()).collect();
        let name = self.choice(p, "placement", here, &names)?;
        let placement = *Placement::ALL
            .iter()
            .find(|p| p.name() == name)
            .expect("a listed name");
        if placement == Placement::Rocwasm {
            let why = if world == World::Transform {
                Some("a transform stage must run where the records are made (its output is what the outputs write)")
            } else if r.callbacks.as_ref().is_some_and(|c| *c.get_ref()) {
                Some("`callbacks = true` answers in the application's call path")
            } else if r
                .external_correlation
                .as_ref()
                .is_some_and(|c| *c.get_ref())
            {
                Some("`external_correlation = true` answers in the application's call path")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(self.src.error(
                    p.span(),
                    format!("`placement = \"rocwasm\"` {here}: {why}; only an analysis that reads batches can run in the launcher"),
                ));
            }
        }
        Ok(placement)
    }

    /// `callbacks` and `external_correlation`: the synchronous services the
    /// stage may configure. A transform's world has no `profiler`, so
    /// asking for them there is a mistake worth saying.
    fn services(&self, r: &RawStage, world: World, here: &str) -> Result<Services, ConfigError> {
        for (key, ask) in [
            ("callbacks", &r.callbacks),
            ("external_correlation", &r.external_correlation),
        ] {
            if let (World::Transform, Some(a)) = (world, ask) {
                if *a.get_ref() {
                    return Err(self.src.error(
                        a.span(),
                        format!("`{key} = true` {here}: a transform stage cannot configure {key} (its world has no `profiler` interface)"),
                    ));
                }
            }
        }
        Ok(Services {
            callbacks: r.callbacks.as_ref().map(|c| *c.get_ref()),
            external_correlation: r.external_correlation.as_ref().map(|c| *c.get_ref()),
        })
    }

    fn check_stage_name(&self, name: &Spanned<String>, here: &str) -> Result<(), ConfigError> {
        let s = name.get_ref();
        let bad = s.char_indices().find(|&(i, c)| {
            !(c.is_ascii_alphanumeric() || (i > 0 && matches!(c, '-' | '_' | '.')))
        });
        if s.is_empty() {
            return Err(self
                .src
                .error(name.span(), format!("empty stage `name` {here}")));
        }
        if let Some((i, c)) = bad {
            return Err(self.src.error_in_string(
                name.span(),
                s,
                i,
                format!(
                    "invalid character `{c}` in stage name `{s}` {here} (use letters, digits, `-`, `_` and `.`, starting with a letter or digit)"
                ),
            ));
        }
        Ok(())
    }

    fn digest(&self, d: &Spanned<String>, here: &str) -> Result<String, ConfigError> {
        let s = d.get_ref();
        if let Some((i, c)) = s.char_indices().find(|(_, c)| !c.is_ascii_hexdigit()) {
            return Err(self.src.error_in_string(
                d.span(),
                s,
                i,
                format!("`sha256` {here} must be 64 hexadecimal digits; found `{c}`"),
            ));
        }
        if s.len() != 64 {
            return Err(self.src.error(
                d.span(),
                format!(
                    "`sha256` {here} must be 64 hexadecimal digits; found {} characters",
                    s.chars().count()
                ),
            ));
        }
        Ok(s.to_ascii_lowercase())
    }

    fn plugin(
        &self,
        p: &Spanned<String>,
        here: &str,
        settings: &Settings,
        digest: Option<(&Spanned<String>, &str)>,
    ) -> Result<PluginRef, ConfigError> {
        let spec = p.get_ref();
        let mut plugin = match resolve::classify(spec) {
            resolve::Spec::Shipped(reference) => PluginRef {
                spec: spec.clone(),
                stock: false,
                shipped: true,
                path: PathBuf::from(reference),
            },
            resolve::Spec::Path(rel) => PluginRef {
                spec: spec.clone(),
                stock: false,
                shipped: false,
                path: self.base.join(rel),
            },
            resolve::Spec::Stock(name) => PluginRef {
                spec: spec.clone(),
                stock: true,
                shipped: false,
                path: PathBuf::from(name),
            },
            resolve::Spec::Invalid(why) => {
                return Err(self
                    .src
                    .error(p.span(), format!("invalid `plugin` {here}: {why}")))
            }
        };
        if !self.options.check_plugins {
            return Ok(plugin);
        }
        if plugin.shipped {
            let Some(fetcher) = &self.options.fetcher else {
                return Err(self.src.error(
                    p.span(),
                    format!("plugin `{spec}` {here} is shipped from a store, and this command does not pull plugins"),
                ));
            };
            plugin.path = fetcher
                .0
                .fetch(spec, digest.map(|(_, pin)| pin))
                .map_err(|why| self.src.error(p.span(), format!("plugin {here}: {why}")))?;
        } else if plugin.stock {
            let search: Vec<PathBuf> = settings
                .plugin_path
                .iter()
                .chain(&self.options.plugin_path)
                .cloned()
                .collect();
            match resolve::find_stock(spec, &search) {
                Some(path) => plugin.path = path,
                None => {
                    return Err(self
                        .src
                        .error(p.span(), resolve::stock_not_found_message(spec)))
                }
            }
        } else if !plugin.path.is_file() {
            let what = if plugin.path.exists() {
                "is not a file"
            } else {
                "does not exist"
            };
            return Err(self.src.error(
                p.span(),
                format!(
                    "plugin file `{spec}` {here} {what} (paths are relative to the chain file)"
                ),
            ));
        }
        if let Some((d, expected)) = digest {
            let actual = resolve::sha256_of(&plugin.path).map_err(|e| {
                self.src
                    .error(p.span(), format!("cannot read plugin `{spec}` {here}: {e}"))
            })?;
            if actual != expected {
                return Err(self.src.error(
                    d.span(),
                    format!("`sha256` {here} does not match plugin `{spec}` (the file's digest is {actual})"),
                ));
            }
        }
        Ok(plugin)
    }

    fn domains(
        &self,
        names: &[Spanned<String>],
        key: &str,
        here: &str,
    ) -> Result<Vec<BufferTracingKind>, ConfigError> {
        let mut kinds = Vec::new();
        for n in names {
            let Some(resolved) = domains::resolve(n.get_ref()) else {
                return Err(self
                    .src
                    .error(n.span(), unknown_domain(n.get_ref(), key, here)));
            };
            for k in resolved {
                if domains::batch_table(k).is_none() {
                    return Err(self.src.error(
                        n.span(),
                        format!(
                            "`{}` in `{key}` {here}: {}",
                            n.get_ref(),
                            domains::why_not_deliverable(k)
                        ),
                    ));
                }
                kinds.push(k);
            }
        }
        kinds.sort();
        kinds.dedup();
        Ok(kinds)
    }

    fn operations(
        &self,
        ops: &BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
        domains: &[BufferTracingKind],
        here: &str,
    ) -> Result<BTreeMap<BufferTracingKind, Vec<Operation>>, ConfigError> {
        // The map is ordered by key text; report in document order instead.
        let mut entries: Vec<_> = ops.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        let mut out: BTreeMap<BufferTracingKind, Vec<Operation>> = BTreeMap::new();
        for (key, names) in entries {
            let Some(kinds) = domains::resolve(key.get_ref()) else {
                return Err(self.src.error(
                    key.span(),
                    unknown_domain(key.get_ref(), "operations", here),
                ));
            };
            if let Some(k) = kinds.iter().find(|k| !domains.contains(k)) {
                return Err(self.src.error(
                    key.span(),
                    format!(
                        "`operations` {here} filters `{}`, but `{k}` is not in the stage's `domains`",
                        key.get_ref()
                    ),
                ));
            }
            for name in names {
                // An alias key (`hip`) names several kinds: the first that
                // knows the operation takes it.
                let mut found = None;
                let mut any_operations = false;
                for &k in &kinds {
                    match operations::lookup(k, name.get_ref()) {
                        Lookup::Found(id, canonical) => {
                            found = Some((k, id, canonical));
                            break;
                        }
                        Lookup::Unknown => any_operations = true,
                        Lookup::NoOperations => {}
                    }
                }
                let Some((kind, id, canonical)) = found else {
                    let message = if any_operations {
                        format!(
                            "unknown operation `{}` of `{}` {here} (`rocwasm kinds {}` lists them)",
                            name.get_ref(),
                            key.get_ref(),
                            kinds[0].name().to_ascii_lowercase()
                        )
                    } else {
                        format!(
                            "`{}` has no named operations to filter {here}; remove it from `operations`",
                            key.get_ref()
                        )
                    };
                    return Err(self.src.error(name.span(), message));
                };
                let list = out.entry(kind).or_default();
                if !list.iter().any(|o| o.id == id) {
                    list.push(Operation {
                        name: canonical.to_string(),
                        id,
                    });
                }
            }
        }
        Ok(out)
    }

    fn limits(&self, raw: &RawLimits, defaults: Limits, here: &str) -> Result<Limits, ConfigError> {
        let mut l = defaults;
        if let Some(m) = &raw.memory {
            l.memory_bytes = self.size(m, "memory", here)?;
            if l.memory_bytes < MIN_MEMORY {
                return Err(self.src.error(
                    m.span(),
                    format!("`memory` {here} must be at least 64KiB (one Wasm page)"),
                ));
            }
        }
        if let Some(d) = &raw.deadline {
            l.deadline = self.duration(d, "deadline", here)?;
        }
        if let Some(d) = &raw.callback_deadline {
            l.callback_deadline = self.duration(d, "callback_deadline", here)?;
        }
        if let Some(o) = &raw.output {
            l.output_bytes = self.size(o, "output", here)?;
        }
        Ok(l)
    }

    fn failure_policy(&self, r: &RawStage, here: &str) -> Result<FailurePolicy, ConfigError> {
        let policy = match &r.on_failure {
            None => "disable",
            Some(p) => self.choice(
                p,
                "on_failure",
                here,
                &["skip", "disable", "restart", "abort"],
            )?,
        };
        if policy != "restart" {
            let stray = r.max_restarts.as_ref().map(|m| ("max_restarts", m.span()));
            let stray = stray.or(r
                .restart_backoff
                .as_ref()
                .map(|b| ("restart_backoff", b.span())));
            if let Some((key, span)) = stray {
                return Err(self.src.error(
                    span,
                    format!("`{key}` {here} applies only with `on_failure = \"restart\"` (found \"{policy}\")"),
                ));
            }
        }
        Ok(match policy {
            "skip" => FailurePolicy::Skip,
            "disable" => FailurePolicy::Disable,
            "abort" => FailurePolicy::Abort,
            _ => {
                let max = match &r.max_restarts {
                    None => FailurePolicy::DEFAULT_MAX_RESTARTS,
                    Some(m) if (0..=MAX_RESTARTS).contains(m.get_ref()) => *m.get_ref() as u32,
                    Some(m) => {
                        return Err(self.src.error(
                            m.span(),
                            format!("`max_restarts` {here} must be between 0 and {MAX_RESTARTS}"),
                        ))
                    }
                };
                let backoff = match &r.restart_backoff {
                    None => FailurePolicy::DEFAULT_RESTART_BACKOFF,
                    Some(b) => units::parse_duration(b.get_ref()).map_err(|e| {
                        self.src
                            .error(b.span(), format!("bad `restart_backoff` {here}: {e}"))
                    })?,
                };
                FailurePolicy::Restart { max, backoff }
            }
        })
    }

    fn grant(&self, o: &Spanned<toml::Value>, here: &str) -> Result<OutputGrant, ConfigError> {
        match o.get_ref() {
            toml::Value::Boolean(true) => Ok(OutputGrant::RunDirectory),
            toml::Value::Boolean(false) => Ok(OutputGrant::None),
            toml::Value::String(dir) => {
                let bad = dir.is_empty()
                    || dir.starts_with('/')
                    || dir.contains('\\')
                    || dir.contains('%')
                    || dir.split('/').any(|c| c.is_empty() || c == "." || c == "..");
                if bad {
                    return Err(self.src.error(
                        o.span(),
                        format!(
                            "`output` {here} must name a subdirectory of the run's output directory (relative, no `..`, no empty parts); found \"{dir}\""
                        ),
                    ));
                }
                Ok(OutputGrant::Subdirectory(dir.clone()))
            }
            other => Err(self.src.error(
                o.span(),
                format!(
                    "wrong type for `output` {here}: expected true, false or a subdirectory name, found {}",
                    value_words(other)
                ),
            )),
        }
    }

    /// A transform's domains must be read by someone after it: a later
    /// stage or the output sinks. Otherwise its filtering changes nothing.
    fn transforms_feed_someone(
        &self,
        raw: &RawChain,
        stages: &[Stage],
        output: &Output,
    ) -> Result<(), ConfigError> {
        for (i, stage) in stages.iter().enumerate() {
            if stage.world != World::Transform {
                continue;
            }
            let later = &stages[i + 1..];
            let consumed = |k: &BufferTracingKind| {
                output.trace.contains(k)
                    || later
                        .iter()
                        .any(|s| s.domains.is_empty() || s.domains.contains(k))
            };
            let idle = if stage.domains.is_empty() {
                later.iter().all(|s| s.domains.is_empty()) && output.trace.is_empty()
            } else {
                false
            };
            let span = || {
                raw.stage[i]
                    .get_ref()
                    .domains
                    .as_ref()
                    .and_then(|d| d.first())
                    .map_or_else(
                        || {
                            raw.stage[i]
                                .get_ref()
                                .kind
                                .as_ref()
                                .map_or(raw.stage[i].span(), |k| k.span())
                        },
                        |d| d.span(),
                    )
            };
            if idle {
                return Err(self.src.error(
                    span(),
                    format!(
                        "transform `{}` in [[stage]] #{} has nothing to filter: no later stage and no `trace` in [output] receives batches",
                        stage.name,
                        i + 1
                    ),
                ));
            }
            if let Some(k) = stage.domains.iter().find(|k| !consumed(k)) {
                // Point at the domain entry that named this kind.
                let entry = raw.stage[i]
                    .get_ref()
                    .domains
                    .iter()
                    .flatten()
                    .find(|d| domains::resolve(d.get_ref()).is_some_and(|ks| ks.contains(k)))
                    .map_or_else(span, |d| d.span());
                return Err(self.src.error(
                    entry,
                    format!(
                        "transform `{}` in [[stage]] #{} filters `{k}`, but no later stage and no `trace` in [output] receives `{k}`",
                        stage.name,
                        i + 1
                    ),
                ));
            }
        }
        Ok(())
    }

    // ---- value helpers -------------------------------------------------

    fn choice<'v>(
        &self,
        v: &Spanned<String>,
        key: &str,
        here: &str,
        allowed: &[&'v str],
    ) -> Result<&'v str, ConfigError> {
        allowed
            .iter()
            .copied()
            .find(|a| a.eq_ignore_ascii_case(v.get_ref()))
            .ok_or_else(|| {
                self.src.error(
                    v.span(),
                    format!(
                        "unknown value \"{}\" for `{key}` {here} (expected one of: {})",
                        v.get_ref(),
                        allowed.join(", ")
                    ),
                )
            })
    }

    fn size(&self, v: &Spanned<toml::Value>, key: &str, here: &str) -> Result<u64, ConfigError> {
        match v.get_ref() {
            toml::Value::Integer(n) if *n >= 0 => Ok(*n as u64),
            toml::Value::String(s) => units::parse_size(s)
                .map_err(|e| self.src.error(v.span(), format!("bad size for `{key}` {here}: {e}"))),
            other => Err(self.src.error(
                v.span(),
                format!(
                    "wrong type for `{key}` {here}: expected a size like \"256MiB\" or a number of bytes, found {}",
                    value_words(other)
                ),
            )),
        }
    }

    fn duration(
        &self,
        v: &Spanned<toml::Value>,
        key: &str,
        here: &str,
    ) -> Result<Duration, ConfigError> {
        let d = match v.get_ref() {
            toml::Value::String(s) => units::parse_duration(s)
                .map_err(|e| self.src.error(v.span(), format!("bad duration for `{key}` {here}: {e}")))?,
            other => {
                return Err(self.src.error(
                    v.span(),
                    format!(
                        "wrong type for `{key}` {here}: expected a duration with a unit like \"500ms\", found {}",
                        value_words(other)
                    ),
                ))
            }
        };
        if d.is_zero() {
            return Err(self
                .src
                .error(v.span(), format!("`{key}` {here} must be longer than zero")));
        }
        Ok(d)
    }

    fn watermark(&self, v: &Spanned<toml::Value>, size: u64) -> Result<u64, ConfigError> {
        let here = "in [settings.buffer]";
        let bytes = match v.get_ref() {
            toml::Value::String(s) if s.trim_end().ends_with('%') => {
                let pct = s.trim_end().trim_end_matches('%').trim();
                match pct.parse::<u64>() {
                    Ok(p) if (1..=100).contains(&p) => percent_of(size, p),
                    _ => {
                        return Err(self.src.error(
                            v.span(),
                            format!("bad `watermark` {here}: a percentage must be a whole number from 1% to 100%"),
                        ))
                    }
                }
            }
            _ => self.size(v, "watermark", here)?,
        };
        if bytes == 0 || bytes > size {
            return Err(self.src.error(
                v.span(),
                format!(
                    "`watermark` {here} must be above zero and at most the buffer size ({})",
                    units::format_size(size)
                ),
            ));
        }
        Ok(bytes)
    }

    fn template(&self, v: &Spanned<String>, key: &str) -> Result<PathTemplate, ConfigError> {
        PathTemplate::parse(v.get_ref()).map_err(|e| {
            self.src.error_in_string(
                v.span(),
                v.get_ref(),
                e.index,
                format!("bad `{key}` in [output]: {}", e.message),
            )
        })
    }

    fn non_empty<'v>(
        &self,
        v: &'v Spanned<String>,
        key: &str,
        here: &str,
    ) -> Result<&'v str, ConfigError> {
        if v.get_ref().trim().is_empty() {
            return Err(self.src.error(v.span(), format!("empty `{key}` {here}")));
        }
        Ok(v.get_ref())
    }
}

fn unknown_domain(name: &str, key: &str, here: &str) -> String {
    let aliases: Vec<&str> = domains::ALIASES.iter().map(|(a, _)| *a).collect();
    format!(
        "unknown domain `{name}` in `{key}` {here} (expected a buffer-tracing kind such as kernel_dispatch or hip_runtime_api, or one of: {}; `rocwasm kinds --buffer` lists the kinds)",
        aliases.join(", ")
    )
}

fn value_words(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("string \"{s}\""),
        toml::Value::Integer(i) => format!("integer `{i}`"),
        toml::Value::Float(f) => format!("float `{f}`"),
        toml::Value::Boolean(b) => format!("boolean `{b}`"),
        toml::Value::Datetime(d) => format!("datetime `{d}`"),
        toml::Value::Array(_) => "an array".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// Flattens a stage's `config` table for the WIT `config` interface:
/// nested keys joined with `.`, arrays as JSON, scalars as their text.
pub(crate) fn flatten(table: &toml::Table) -> BTreeMap<String, String> {
    fn walk(prefix: &str, table: &toml::Table, out: &mut BTreeMap<String, String>) {
        for (k, v) in table {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(t) => walk(&key, t, out),
                other => {
                    out.insert(key, scalar_text(other));
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", table, &mut out);
    out
}

fn scalar_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(_) | toml::Value::Table(_) => to_json(v).to_string(),
    }
}

fn to_json(v: &toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s.clone()),
        toml::Value::Integer(i) => J::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(*b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(a) => J::Array(a.iter().map(to_json).collect()),
        toml::Value::Table(t) => {
            J::Object(t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

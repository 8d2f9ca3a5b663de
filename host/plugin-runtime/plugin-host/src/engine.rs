//! [`PluginEngine`]: the process-wide engine, the compiled-component cache, and
//! turning a `.wasm` file into a [`CompiledPlugin`] ready to instantiate.
//!
//! # Time
//!
//! The engine runs with epoch interruption: a background thread increments
//! the engine's epoch every [`EngineConfig::epoch_tick`] and each call sets
//! its store's deadline a number of ticks ahead, so a guest that loops
//! forever traps at its deadline (± one tick). Epochs cost far less than
//! fuel in tight loops (0–25 % versus ~2×).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};

use crate::bindings::analysis::AnalysisPluginPre;
use crate::bindings::transform::TransformPluginPre;
use crate::cache::{self, ComponentCache};
use crate::digest_memo::DigestMemo;
use crate::legacy::LegacyPre;
use crate::state::{self, PluginState};
use crate::world::{self, Surface, WitVersion, World, WorldError};

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Where compiled components are cached; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// The site cache, read before `cache_dir` (the site policy names it;
    /// see [`ComponentCache::open_site`]); stored into only by root.
    pub site_cache_dir: Option<PathBuf>,
    /// The epoch period: the granularity of deadlines.
    pub epoch_tick: Duration,
    /// The guest's native stack budget; deep recursion traps past it.
    pub max_wasm_stack: usize,
    /// Let wasmtime catch guest faults with SIGSEGV/SIGILL/SIGBUS/SIGFPE
    /// handlers (faster bounds checks). A host living inside someone else's
    /// process (the tool library) turns this off so that the application's
    /// own signal handling stays untouched; guests then get explicit checks.
    pub signals_based_traps: bool,
    /// Count the Wasm instructions each store executes (wasmtime fuel, ~1
    /// unit per instruction), for `rocwasm plugin vet`'s instructions per
    /// record ([`crate::StageMetrics`]). Off for runs: it slows guests and
    /// changes the compiled code (another cache key).
    pub consume_fuel: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            cache_dir: ComponentCache::default_dir(),
            site_cache_dir: None,
            epoch_tick: Duration::from_millis(1),
            max_wasm_stack: 512 << 10,
            signals_based_traps: true,
            consume_fuel: false,
        }
    }
}

/// The wasmtime engine of the process, its epoch ticker and its cache.
pub struct PluginEngine {
    engine: Engine,
    cache: Option<ComponentCache>,
    site_cache: Option<ComponentCache>,
    /// Plugin digests remembered in the private cache (none without one).
    memo: Option<DigestMemo>,
    tick: Duration,
    ticker: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
    linkers: Linkers,
    fuel: bool,
}

/// One linker per world, with and without WASI.
struct Linkers {
    analysis: Linker<PluginState>,
    analysis_wasi: Linker<PluginState>,
    transform: Linker<PluginState>,
    transform_wasi: Linker<PluginState>,
}

impl Linkers {
    fn new(engine: &Engine) -> Result<Self> {
        let link = |world: World, wasi: bool| -> Result<Linker<PluginState>> {
            let mut l = Linker::new(engine);
            state::add_to_linker(&mut l, world)?;
            if wasi {
                wasmtime_wasi::p2::add_to_linker_sync(&mut l)?;
            }
            Ok(l)
        };
        Ok(Linkers {
            analysis: link(World::Analysis, false)?,
            analysis_wasi: link(World::Analysis, true)?,
            transform: link(World::Transform, false)?,
            transform_wasi: link(World::Transform, true)?,
        })
    }

    fn get(&self, world: World, wasi: bool) -> &Linker<PluginState> {
        match (world, wasi) {
            (World::Analysis, false) => &self.analysis,
            (World::Analysis, true) => &self.analysis_wasi,
            (World::Transform, false) => &self.transform,
            (World::Transform, true) => &self.transform_wasi,
        }
    }
}

/// A plugin compiled and pre-linked: instantiating it is cheap.
pub struct CompiledPlugin {
    /// The `.wasm` file it was read from.
    pub path: PathBuf,
    /// Hex SHA-256 of the `.wasm` bytes.
    pub digest: String,
    /// The world it implements, detected from its exports.
    pub world: World,
    /// The `rocwasm:plugin` package version it was built against.
    pub version: WitVersion,
    /// Its imports and exports; importing WASI gets it a deny-all context.
    pub surface: Surface,
    /// Size of the `.wasm` file in bytes.
    pub size: u64,
    /// True when the compiled code came from the cache.
    pub from_cache: bool,
    pub(crate) pre: Pre,
}

impl CompiledPlugin {
    /// True when its results merge across instances (it exports `merge`,
    /// WIT 0.3.1: [`Chain::finish_partial`](crate::Chain::finish_partial),
    /// [`Chain::merge_partial`](crate::Chain::merge_partial)).
    pub fn mergeable(&self) -> bool {
        world::exports_merge(&self.surface)
    }
}

/// The pre-linked component of either world: all imports resolved, so each
/// (re)start only instantiates it in a fresh store.
pub(crate) enum Pre {
    Analysis(AnalysisPluginPre<PluginState>),
    Transform(TransformPluginPre<PluginState>),
    /// Either world, built against an earlier package version.
    Legacy(LegacyPre),
}

impl fmt::Debug for CompiledPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledPlugin")
            .field("path", &self.path)
            .field("digest", &self.digest)
            .field("world", &self.world)
            .finish_non_exhaustive()
    }
}

/// What `rocwasm plugin inspect` prints.
#[derive(Debug, Clone)]
pub struct PluginInfo {
    /// The file inspected.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Hex SHA-256 of its bytes (part of its key in the compiled-component cache).
    pub digest: String,
    /// The world, or why the component is neither.
    pub world: Result<World, WorldError>,
    /// The `rocwasm:plugin` package version it targets.
    pub version: WitVersion,
    /// The interfaces it imports, as full names (`rocwasm:plugin/log@0.3.1`).
    pub imports: Vec<String>,
    /// The interfaces it exports, as full names.
    pub exports: Vec<String>,
    /// True when the component imports WASI (it would get a deny-all context).
    pub imports_wasi: bool,
    /// True when it exports `merge`: its results merge across instances.
    pub mergeable: bool,
}

impl PluginEngine {
    /// The engine (component model, epoch interruption), its ticker thread,
    /// the cache (disabled with a warning if its directory cannot be used)
    /// and the four linkers (each world, with and without WASI).
    pub fn new(config: EngineConfig) -> Result<PluginEngine> {
        let mut c = Config::new();
        c.wasm_component_model(true)
            .epoch_interruption(true)
            .max_wasm_stack(config.max_wasm_stack)
            .signals_based_traps(config.signals_based_traps)
            .consume_fuel(config.consume_fuel);
        let engine = Engine::new(&c)?;
        let cache = match &config.cache_dir {
            Some(dir) => match ComponentCache::open(dir, &engine) {
                Ok(c) => Some(c),
                Err(e) => {
                    tracing::warn!("compiled-component cache disabled: {e:#}");
                    None
                }
            },
            None => None,
        };
        let site_cache = config.site_cache_dir.as_ref().and_then(|dir| {
            ComponentCache::open_site(dir, &engine)
                .map_err(|e| tracing::warn!("site cache not used: {e:#}"))
                .ok()
        });
        let stop = Arc::new(AtomicBool::new(false));
        let handle = {
            let (engine, stop, tick) = (engine.clone(), stop.clone(), config.epoch_tick);
            std::thread::Builder::new()
                .name("rocwasm-epoch".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(tick);
                        engine.increment_epoch();
                    }
                })
                .context("spawning the epoch ticker")?
        };
        let memo = cache.as_ref().map(|c| DigestMemo::new(c.dir()));
        Ok(PluginEngine {
            linkers: Linkers::new(&engine)?,
            engine,
            memo,
            cache,
            site_cache,
            tick: config.epoch_tick,
            ticker: Some((stop, handle)),
            fuel: config.consume_fuel,
        })
    }

    /// Whether stores count executed instructions ([`EngineConfig::consume_fuel`]).
    pub fn counts_instructions(&self) -> bool {
        self.fuel
    }

    /// The process's wasmtime engine, which every store and compiled
    /// component of this runtime belongs to.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The compiled-component cache, `None` when disabled.
    pub fn cache(&self) -> Option<&ComponentCache> {
        self.cache.as_ref()
    }

    /// Epoch ticks covering `budget` (at least 2, so a tick landing right
    /// after the deadline is set does not cut a call short).
    pub(crate) fn ticks(&self, budget: Duration) -> u64 {
        let t = self.tick.as_nanos().max(1);
        (budget.as_nanos().div_ceil(t) as u64).max(1) + 1
    }

    /// Reads, checks, compiles (or loads from the cache) and pre-links a plugin.
    pub fn compile(&self, path: &Path) -> Result<Arc<CompiledPlugin>> {
        let mut file = open_component(path, self.memo.as_ref())?;
        let (component, from_cache) = self.component(&mut file, path)?;
        let surface = Surface::of(&self.engine, &component);
        let world = world::detect(&surface)
            .with_context(|| format!("{} is not a rocwasm plugin", path.display()))?;
        let linker = self.linkers.get(world, surface.imports_wasi());
        let pre = linker
            .instantiate_pre(&component)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("linking {} as a {world}", path.display()))?;
        let version = WitVersion::of(&surface);
        let pre = match (version, world) {
            (WitVersion::V0_2_0, World::Analysis) => Pre::Analysis(AnalysisPluginPre::new(pre)?),
            (WitVersion::V0_2_0, World::Transform) => Pre::Transform(TransformPluginPre::new(pre)?),
            (version, world) => Pre::Legacy(LegacyPre::new(pre, version, world)?),
        };
        Ok(Arc::new(CompiledPlugin {
            path: path.to_path_buf(),
            digest: file.digest,
            world,
            version,
            surface,
            size: file.size,
            from_cache,
            pre,
        }))
    }

    /// Compiles the component of stage `stage` as [`Self::compile`] does
    /// and checks it implements `expected` (when given): everything a run
    /// checks before it runs any plugin code. `rocwasm check` and
    /// [`Chain::new`](crate::Chain::new) both call this, so a chain fails
    /// with the same one sentence either way, naming the stage, the file and
    /// what is wrong (`stage `k`: k.wasm is a core WebAssembly module, not a
    /// component: …`).
    pub fn compile_stage(
        &self,
        stage: &str,
        path: &Path,
        expected: Option<World>,
    ) -> Result<Arc<CompiledPlugin>> {
        let compiled = self
            .compile(path)
            .with_context(|| format!("stage `{stage}`"))?;
        if let Some(expected) = expected {
            if expected != compiled.world {
                let why = WorldError::Unexpected {
                    expected,
                    found: compiled.world,
                };
                bail!("stage `{stage}`: {}: {why}", path.display());
            }
        }
        Ok(compiled)
    }

    /// Describes a component without linking it.
    pub fn inspect(&self, path: &Path) -> Result<PluginInfo> {
        let mut file = open_component(path, self.memo.as_ref())?;
        let (component, _) = self.component(&mut file, path)?;
        let surface = Surface::of(&self.engine, &component);
        Ok(PluginInfo {
            path: path.to_path_buf(),
            size: file.size,
            digest: file.digest,
            world: world::detect(&surface),
            version: WitVersion::of(&surface),
            imports_wasi: surface.imports_wasi(),
            mergeable: world::exports_merge(&surface),
            imports: surface.imports,
            exports: surface.exports,
        })
    }

    /// The compiled component of `file`: from a cache, or compiled (and
    /// stored). Whether it came from a cache.
    fn component(&self, file: &mut PluginFile, path: &Path) -> Result<(Component, bool)> {
        // Root works in the site cache alone (and so fills it); everyone
        // else reads the site's first, then their own, and stores there.
        let (read, target) = match &self.site_cache {
            Some(site) if site.writable() => ([Some(site), None], Some(site)),
            site => ([site.as_ref(), self.cache.as_ref()], self.cache.as_ref()),
        };
        if let Some(c) = read
            .into_iter()
            .flatten()
            .find_map(|c| c.load(&self.engine, &file.digest))
        {
            return Ok((c, true));
        }
        let bytes = file.bytes(path)?;
        let component = Component::new(&self.engine, bytes)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("compiling {}", path.display()))?;
        if let Some(cache) = target {
            if let Err(e) = cache.store(&file.digest, &component) {
                tracing::warn!("could not cache {}: {e:#}", path.display());
            }
        }
        Ok((component, false))
    }
}

impl Drop for PluginEngine {
    fn drop(&mut self) {
        if let Some((stop, handle)) = self.ticker.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    }
}

/// A plugin file being loaded: its size and digest, and its bytes once they
/// were read (a remembered digest spares reading them on a warm load).
struct PluginFile {
    size: u64,
    /// Hex SHA-256 of the bytes.
    digest: String,
    bytes: Option<Vec<u8>>,
}

impl PluginFile {
    /// The bytes, read now if the digest was remembered. Read now, they are
    /// hashed again: whatever is compiled is stored under its own digest
    /// even if the file changed since it was opened.
    fn bytes(&mut self, path: &Path) -> Result<&[u8]> {
        if self.bytes.is_none() {
            let bytes =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            check_component_header(&bytes, path)?;
            let digest = cache::digest(&bytes);
            if digest != self.digest {
                tracing::warn!(
                    "{}: its bytes hash to {digest}, not to the digest remembered for it \
                     ({}); using the bytes' own",
                    path.display(),
                    self.digest
                );
                self.digest = digest;
            }
            self.size = bytes.len() as u64;
            self.bytes = Some(bytes);
        }
        Ok(self.bytes.as_deref().unwrap_or_default())
    }
}

/// Opens a plugin file, checks it is a Wasm *component* (not a core
/// module), and finds its digest: remembered in `memo` for this very file
/// (see [`DigestMemo`]), else by reading and hashing its bytes.
fn open_component(path: &Path, memo: Option<&DigestMemo>) -> Result<PluginFile> {
    use std::io::Read;
    let reading = || format!("reading {}", path.display());
    let mut file = std::fs::File::open(path).with_context(reading)?;
    // The stamp the memo compares is taken before any byte is read.
    let meta = file.metadata().with_context(reading)?;
    let mut bytes = Vec::with_capacity(8);
    (&mut file)
        .take(8)
        .read_to_end(&mut bytes)
        .with_context(reading)?;
    check_component_header(&bytes, path)?;
    if let Some(digest) = memo.and_then(|m| m.get(&meta)) {
        return Ok(PluginFile {
            size: meta.len(),
            digest,
            bytes: None,
        });
    }
    bytes.reserve(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).with_context(reading)?;
    let digest = cache::digest(&bytes);
    if let Some(memo) = memo {
        memo.remember(path, &meta, &digest);
    }
    Ok(PluginFile {
        size: bytes.len() as u64,
        digest,
        bytes: Some(bytes),
    })
}

/// Checks the first bytes of a file are those of a Wasm component.
fn check_component_header(bytes: &[u8], path: &Path) -> Result<()> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        bail!("{} is not a WebAssembly file", path.display());
    }
    // Bytes 6..8 are the layer: 0 for a core module, 1 for a component.
    if bytes[6..8] == [0, 0] {
        bail!(
            "{} is a core WebAssembly module, not a component: build it for the \
             `rocwasm:plugin` worlds (wasm-component-ld, or `wasm-tools component new`)",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> PluginEngine {
        PluginEngine::new(EngineConfig {
            cache_dir: None,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn rejects_non_wasm_and_core_modules_with_a_clear_error() {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("x.wasm");
        std::fs::write(&text, b"hello world").unwrap();
        let e = rt.compile(&text).unwrap_err().to_string();
        assert!(e.contains("not a WebAssembly file"), "{e}");
        let core = dir.path().join("core.wasm");
        std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
        let e = rt.compile(&core).unwrap_err().to_string();
        assert!(e.contains("core WebAssembly module"), "{e}");
    }

    #[test]
    fn a_stage_error_names_the_stage_and_the_file() {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let core = dir.path().join("core.wasm");
        std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
        let e = format!("{:#}", rt.compile_stage("s", &core, None).unwrap_err());
        assert_eq!(
            e,
            format!(
                "stage `s`: {} is a core WebAssembly module, not a component: build it for \
                 the `rocwasm:plugin` worlds (wasm-component-ld, or `wasm-tools component new`)",
                core.display()
            )
        );
    }

    #[test]
    fn an_empty_component_matches_no_world_and_says_what_is_missing() {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("empty.wasm");
        // An empty component in binary form: magic, version 0x0d, layer 1.
        std::fs::write(&p, b"\0asm\x0d\0\x01\0").unwrap();
        let e = format!("{:#}", rt.compile(&p).unwrap_err());
        assert!(
            e.contains("rocwasm:plugin/analysis@0.3.2")
                && e.contains("rocwasm:plugin/transform@0.3.2"),
            "{e}"
        );
        let info = rt.inspect(&p).unwrap();
        assert!(info.world.is_err() && info.exports.is_empty() && info.size == 8);
    }

    /// A settled plugin file is known by its remembered digest without
    /// being read; rewriting it is seen at once.
    #[test]
    fn a_remembered_digest_spares_reading_the_file_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let cache_dir = dir.path().join("cache");
        let rt = PluginEngine::new(EngineConfig {
            cache_dir: Some(cache_dir.clone()),
            ..Default::default()
        })
        .unwrap();
        // Two components: empty, and empty with a custom section `abc`.
        let empty: &[u8] = b"\0asm\x0d\0\x01\0";
        let custom: &[u8] = b"\0asm\x0d\0\x01\0\x00\x04\x03abc";
        let other = dir.path().join("other.wasm");
        std::fs::write(&other, custom).unwrap();
        assert_eq!(rt.inspect(&other).unwrap().digest, cache::digest(custom));

        let plugin = dir.path().join("plugin.wasm");
        std::fs::write(&plugin, empty).unwrap();
        std::thread::sleep(crate::digest_memo::SETTLED + Duration::from_millis(100));
        // Cold: read, hashed, remembered.
        assert_eq!(rt.inspect(&plugin).unwrap().digest, cache::digest(empty));
        let meta = std::fs::metadata(&plugin).unwrap();
        let memo = DigestMemo::new(&cache_dir);
        assert_eq!(memo.get(&meta), Some(cache::digest(empty)));

        // Make the memo lie (name the other component, which is cached):
        // the load believes it, so it did not read the file.
        memo.remember(&plugin, &meta, &cache::digest(custom));
        let believed = rt.inspect(&plugin).unwrap();
        assert_eq!(believed.digest, cache::digest(custom));

        // Any write moves the file's ctime: read and hashed again.
        std::fs::write(&plugin, empty).unwrap();
        assert_eq!(rt.inspect(&plugin).unwrap().digest, cache::digest(empty));
    }

    #[test]
    fn ticks_cover_the_budget() {
        let rt = runtime();
        assert_eq!(rt.ticks(Duration::from_millis(10)), 11);
        assert_eq!(rt.ticks(Duration::ZERO), 2);
    }
}

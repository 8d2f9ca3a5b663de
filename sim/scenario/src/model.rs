//! The scenario's data model and the timing formulas derived from it.

use serde::Deserialize;

/// Everything a run of the simulated runtime can be told.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Scenario {
    /// GPU agents, in enumeration order (`[[devices]]`). The CPU agent is implicit.
    pub devices: Vec<Device>,
    /// Where the virtual clock starts.
    pub clock: Clock,
    /// Kernel costs (`[kernels]`, `[[kernels.cost]]`).
    pub kernels: Kernels,
    /// Copy-engine cost (`[copy]`).
    pub copy: Copy,
    /// Calls that fail on purpose (`[[errors]]`).
    pub errors: Vec<crate::InjectedError>,
    /// Host functions that stand in for kernels (`[[effects]]`).
    pub effects: Vec<Effect>,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            devices: vec![Device::default()],
            clock: Clock::default(),
            kernels: Kernels::default(),
            copy: Copy::default(),
            errors: Vec::new(),
            effects: Vec::new(),
        }
    }
}

/// One simulated GPU.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Device {
    /// The ISA name, e.g. `gfx90a` (the HSA agent name and HIP's `gcnArchName`).
    pub arch: String,
    /// Marketing name (HIP's `hipDeviceProp_t::name`, HSA's product name).
    pub name: String,
    /// Compute units (HSA's `HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT`, HIP's
    /// `multiProcessorCount`).
    pub compute_units: u32,
    /// Device memory in bytes: the size of the agent's one coarse-grained
    /// memory pool (HIP's `totalGlobalMem`).
    pub memory_bytes: u64,
    /// Peak engine clock in MHz (HSA's
    /// `HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY`; HIP's `clockRate` is this
    /// times 1000, in kHz). Only reported, never used for timing: durations
    /// come from [`Kernels`] and [`Copy`](struct@Copy).
    pub clock_mhz: u32,
}

impl Default for Device {
    fn default() -> Self {
        Self {
            arch: "gfx90a".into(),
            name: "Simulated AMD Instinct MI210".into(),
            compute_units: 104,
            memory_bytes: 64 << 30,
            clock_mhz: 1700,
        }
    }
}

/// The virtual clock: every queue's timeline and the copy engine start here.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Clock {
    /// First tick of every queue timeline and of the copy engine.
    pub start_ns: u64,
    /// True (the default): the device follows the host's clock as a GPU
    /// does: work starts no earlier than the host's current tick, completes
    /// once the host clock has reached its end, and profiling timestamps
    /// are in the host's `CLOCK_BOOTTIME` ns, so they line up with the API
    /// calls around them. Durations still follow the cost model exactly.
    /// False: a purely virtual clock whose timestamps (the system domain
    /// included) repeat exactly across runs of a single-threaded program,
    /// for tests of the runtime itself; they do not line up with host time.
    pub follow_host: bool,
}

impl Default for Clock {
    fn default() -> Self {
        Self {
            start_ns: 1_000_000_000,
            follow_host: true,
        }
    }
}

/// Default kernel cost plus per-kernel overrides.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Kernels {
    /// Fixed cost of every dispatch, in ns.
    pub fixed_ns: u64,
    /// Cost per work-item, in picoseconds (10 ps = 0.01 ns).
    pub ps_per_item: u64,
    /// Overrides; the first whose `match` is a substring of the kernel's
    /// symbol name wins.
    pub cost: Vec<KernelCost>,
    /// Every kernel's instruction and memory mix (`[kernels.mix]`), which
    /// the simulated hardware counters are derived from.
    pub mix: Mix,
}

impl Default for Kernels {
    fn default() -> Self {
        Self {
            fixed_ns: 4_000,
            ps_per_item: 10,
            cost: Vec::new(),
            mix: Mix::default(),
        }
    }
}

/// The cost of the kernels whose name contains `match`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KernelCost {
    /// Substring of the kernel's symbol name (the TOML key is `match`);
    /// matching is case-sensitive and the first matching entry wins.
    #[serde(rename = "match")]
    pub pattern: String,
    /// Replaces [`Kernels::fixed_ns`] for these kernels (ns); `None` keeps
    /// the default.
    pub fixed_ns: Option<u64>,
    /// Replaces [`Kernels::ps_per_item`] for these kernels (picoseconds per
    /// work-item); `None` keeps the default.
    pub ps_per_item: Option<u64>,
    /// Replaces fields of [`Kernels::mix`] for these kernels (`mix = { … }`).
    #[serde(default)]
    pub mix: Option<Mix>,
}

/// The copy engine's cost.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Copy {
    /// Fixed cost of every copy, in ns.
    pub fixed_ns: u64,
    /// Bandwidth in bytes per microsecond (16_000 = 16 GB/s).
    pub bytes_per_us: u64,
}

impl Default for Copy {
    fn default() -> Self {
        Self {
            fixed_ns: 1_000,
            bytes_per_us: 16_000,
        }
    }
}

/// A host function that runs when a kernel whose name contains `match`
/// completes: either a built-in (`builtin = "vector_add"` or `"none"`) or a
/// symbol in a shared library (`library`, `symbol`), called as
/// `void f(const void* kernarg, const uint32_t grid[3], const uint16_t workgroup[3])`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Effect {
    /// Substring of the kernel's symbol name (the TOML key is `match`); the
    /// first matching `[[effects]]` entry wins.
    #[serde(rename = "match")]
    pub pattern: String,
    /// A built-in effect, `"vector_add"` or `"none"`; when set, `library`
    /// and `symbol` are ignored.
    pub builtin: Option<String>,
    /// Path of the shared library holding [`Effect::symbol`] (passed to
    /// `dlopen`, loaded once); used only when `builtin` is `None`.
    pub library: Option<String>,
    /// Name of the host function in [`Effect::library`]; both must be set
    /// when `builtin` is `None`, else the effect is ignored with a warning.
    pub symbol: Option<String>,
}

impl Scenario {
    /// Virtual duration of one dispatch:
    /// `fixed_ns + ceil(work_items * ps_per_item / 1000)` where
    /// `work_items = grid_x * grid_y * grid_z` (AQL grid sizes are in
    /// work-items) and the cost is the first `[[kernels.cost]]` whose `match`
    /// is a substring of `kernel_name`, falling back to `[kernels]` field by field.
    pub fn kernel_duration_ns(&self, kernel_name: &str, grid: [u32; 3]) -> u64 {
        let over = self
            .kernels
            .cost
            .iter()
            .find(|c| kernel_name.contains(&c.pattern));
        let fixed = over
            .and_then(|c| c.fixed_ns)
            .unwrap_or(self.kernels.fixed_ns);
        let ps = over
            .and_then(|c| c.ps_per_item)
            .unwrap_or(self.kernels.ps_per_item);
        let items: u64 = grid.iter().map(|&g| u64::from(g.max(1))).product();
        fixed.saturating_add(items.saturating_mul(ps).div_ceil(1000))
    }

    /// Virtual duration of one copy: `fixed_ns + ceil(bytes * 1000 / bytes_per_us)`.
    pub fn copy_duration_ns(&self, bytes: u64) -> u64 {
        let bw = self.copy.bytes_per_us.max(1);
        self.copy
            .fixed_ns
            .saturating_add(bytes.saturating_mul(1000).div_ceil(bw))
    }

    /// The effect for a kernel: the first `[[effects]]` entry that matches,
    /// else the built-in vector add for names containing `vector_add` or `vectorAdd`.
    pub fn effect_for(&self, kernel_name: &str) -> Option<Effect> {
        if let Some(effect) = self
            .effects
            .iter()
            .find(|e| kernel_name.contains(&e.pattern))
        {
            return Some(effect.clone());
        }
        ["vector_add", "vectorAdd"]
            .iter()
            .find(|p| kernel_name.contains(*p))
            .map(|p| Effect {
                pattern: (*p).into(),
                builtin: Some("vector_add".into()),
                library: None,
                symbol: None,
            })
    }
}

/// Instruction and memory mix of a kernel: what its waves execute.
///
/// Each field falls back, one by one, from the matching
/// `[[kernels.cost]] mix` to `[kernels.mix]` to the default documented on
/// the field.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Mix {
    /// Vector ALU instructions per wave (default 16).
    pub valu_per_wave: Option<u64>,
    /// Scalar ALU instructions per wave (default 8).
    pub salu_per_wave: Option<u64>,
    /// Scalar memory instructions per wave (default 2).
    pub smem_per_wave: Option<u64>,
    /// LDS instructions per wave (default 0).
    pub lds_per_wave: Option<u64>,
    /// Vector memory read instructions per wave (default 2).
    pub vmem_rd_per_wave: Option<u64>,
    /// Vector memory write instructions per wave (default 1).
    pub vmem_wr_per_wave: Option<u64>,
    /// Bytes read from global memory per work-item (default 8: two floats).
    pub bytes_read_per_item: Option<u64>,
    /// Bytes written to global memory per work-item (default 4: one float).
    pub bytes_written_per_item: Option<u64>,
    /// Distinct bytes touched per work-item, the L2 footprint (default: read
    /// plus written, no reuse).
    pub footprint_per_item: Option<u64>,
}

/// A [`Mix`] with every field resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedMix {
    /// See [`Mix::valu_per_wave`].
    pub valu_per_wave: u64,
    /// See [`Mix::salu_per_wave`].
    pub salu_per_wave: u64,
    /// See [`Mix::smem_per_wave`].
    pub smem_per_wave: u64,
    /// See [`Mix::lds_per_wave`].
    pub lds_per_wave: u64,
    /// See [`Mix::vmem_rd_per_wave`].
    pub vmem_rd_per_wave: u64,
    /// See [`Mix::vmem_wr_per_wave`].
    pub vmem_wr_per_wave: u64,
    /// See [`Mix::bytes_read_per_item`].
    pub bytes_read_per_item: u64,
    /// See [`Mix::bytes_written_per_item`].
    pub bytes_written_per_item: u64,
    /// See [`Mix::footprint_per_item`].
    pub footprint_per_item: u64,
}

impl Mix {
    /// Each field of `self`, else of `fallback`, else its default.
    pub fn resolve(&self, fallback: &Mix) -> ResolvedMix {
        let pick = |a: Option<u64>, b: Option<u64>, d: u64| a.or(b).unwrap_or(d);
        let read = pick(self.bytes_read_per_item, fallback.bytes_read_per_item, 8);
        let written = pick(
            self.bytes_written_per_item,
            fallback.bytes_written_per_item,
            4,
        );
        ResolvedMix {
            valu_per_wave: pick(self.valu_per_wave, fallback.valu_per_wave, 16),
            salu_per_wave: pick(self.salu_per_wave, fallback.salu_per_wave, 8),
            smem_per_wave: pick(self.smem_per_wave, fallback.smem_per_wave, 2),
            lds_per_wave: pick(self.lds_per_wave, fallback.lds_per_wave, 0),
            vmem_rd_per_wave: pick(self.vmem_rd_per_wave, fallback.vmem_rd_per_wave, 2),
            vmem_wr_per_wave: pick(self.vmem_wr_per_wave, fallback.vmem_wr_per_wave, 1),
            bytes_read_per_item: read,
            bytes_written_per_item: written,
            footprint_per_item: pick(
                self.footprint_per_item,
                fallback.footprint_per_item,
                read + written,
            ),
        }
    }
}

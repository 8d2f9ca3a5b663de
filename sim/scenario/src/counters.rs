//! The simulated GPU's hardware counters: what a dispatch would have
//! counted, derived from the model of the dispatch, never invented.
//!
//! A real GPU counts events in hardware blocks (the shader sequencer `SQ`,
//! the graphics block `GRBM`, the vector L1 caches `TCP`, the L2 channels
//! `TCC`), each block once per instance (per XCC, per shader engine, per
//! compute unit, per L2 channel). The simulated GPU has no hardware, so
//! each counter here is a formula over what the simulator knows of a
//! dispatch: its launch geometry, its duration (the cost model of
//! [`crate::Kernels`]), the engine clock, and the instruction and memory mix
//! the scenario's `[kernels.mix]` / `[[kernels.cost]] mix` entries give
//! ([`crate::Mix`], with documented defaults). A counter that is not in
//! [`MODELLED`] is not produced at all: a profiler reports it unsupported
//! on the simulated GPU.
//!
//! The formulas (`docs/COUNTERS.md` has the same table for users):
//!
//! | counter | block | instances | value |
//! |---|---|---|---|
//! | `SQ_WAVES` | SQ | per shader engine | waves: per workgroup ⌈its work-items / wave size⌉, edge workgroups smaller |
//! | `SQ_BUSY_CYCLES` | SQ | per shader engine | `cycles` on a shader engine that ran a wave, else 0 |
//! | `SQ_WAVE_CYCLES` | SQ | per shader engine | `⌈min(waves, wave slots) × cycles / 4⌉`: resident waves × cycles, in quad-cycles as the hardware counts |
//! | `SQ_INSTS_VALU`, `_SALU`, `_SMEM`, `_LDS`, `_VMEM_RD`, `_VMEM_WR` | SQ | per shader engine | waves × the mix's instructions per wave |
//! | `GRBM_COUNT`, `GRBM_GUI_ACTIVE` | GRBM | one (per XCC) | `cycles` (the GPU is busy for the whole dispatch) |
//! | `TCP_TOTAL_CACHE_ACCESSES` | TCP | per compute unit of a shader engine | 64-byte requests read and written |
//! | `TCP_TCC_READ_REQ`, `TCP_TCC_WRITE_REQ` | TCP | same | 64-byte requests read, written (no L1 reuse) |
//! | `TCC_REQ`, `TCC_READ`, `TCC_WRITE` | TCC | per L2 channel | L2 requests: read + written, read, written |
//! | `TCC_MISS`, `TCC_HIT` | TCC | per L2 channel | misses: the footprint's 128-byte lines when it fits in L2, else every request; hits: the rest |
//! | `TCC_EA_RDREQ` / `TCC_EA0_RDREQ` (gfx942), `TCC_EA_WRREQ` / `TCC_EA0_WRREQ`, their `_64B` writes | TCC | per L2 channel | read misses; written requests (all 64 bytes) |
//! | `TCC_EA_RDREQ_32B` / `TCC_EA0_RDREQ_32B`, `TCC_BUBBLE` | TCC | per L2 channel | 0: every request is 64 bytes |
//! | `simd_count`, `simd_per_cu`, `array_count`, `simd_arrays_per_engine`, `cu_per_simd_array`, `wave_front_size`, `max_waves_per_simd`, `num_xcc`, `max_engine_clk_ccompute` | — | one | the agent's properties (definitions derive `CU_NUM`, `SE_NUM`, … from them) |
//!
//! On a device with several XCCs (gfx942) every counter also has one
//! instance per XCC, outermost.
//!
//! where `cycles = ⌈duration_ns × clock_mhz / 1000⌉`, and a value counted
//! over several instances is split among them as evenly as integers allow
//! (instance `i` of `n` gets `⌊v/n⌋`, plus one while `i < v mod n`), so the
//! instances always sum to the whole.

use crate::{Device, ResolvedMix, Scenario};

/// The hardware a device's counters are counted on: its instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Accelerated compute dies (XCCs); 1 before gfx940.
    pub xccs: u32,
    /// Shader engines per XCC.
    pub shader_engines_per_xcc: u32,
    /// Compute units per XCC.
    pub compute_units_per_xcc: u32,
    /// SIMDs per compute unit.
    pub simds_per_cu: u32,
    /// Work-items per wave.
    pub wave_size: u32,
    /// Waves a SIMD holds at once.
    pub max_waves_per_simd: u32,
    /// L2 (TCC) channels per XCC.
    pub l2_channels_per_xcc: u32,
    /// L2 bytes per XCC.
    pub l2_bytes_per_xcc: u64,
    /// Engine clock in MHz.
    pub clock_mhz: u32,
}

impl Device {
    /// The device's instances: its architecture's (gfx942: 8 XCCs of 4
    /// shader engines and 16 L2 channels, 4 MiB L2 each; anything else:
    /// gfx90a's 1 XCC of 8 shader engines and 32 channels, 8 MiB L2), with
    /// the scenario's compute units and clock.
    pub fn shape(&self) -> Shape {
        let (xccs, se, l2_channels_per_xcc, l2_bytes) = match self.arch.as_str() {
            "gfx940" | "gfx941" | "gfx942" | "gfx950" => (8, 4, 16, 4 << 20),
            _ => (1, 8, 32, 8 << 20),
        };
        Shape {
            xccs,
            shader_engines_per_xcc: se,
            compute_units_per_xcc: (self.compute_units / xccs).max(1),
            simds_per_cu: 4,
            wave_size: 64,
            max_waves_per_simd: 8,
            l2_channels_per_xcc,
            l2_bytes_per_xcc: l2_bytes,
            clock_mhz: self.clock_mhz,
        }
    }
}

/// A dimension a counter's instances are laid out over, numbered as
/// rocprofiler-sdk numbers them (`rocprofiler_counter_dimension_id_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `DIMENSION_XCC` (1): one per XCC; only on a device with several.
    Xcc = 1,
    /// `DIMENSION_SHADER_ENGINE` (3): one per shader engine of an XCC.
    ShaderEngine = 3,
    /// `DIMENSION_INSTANCE` (7): the block's instances (a TCC's channels, a
    /// TCP's compute units; 1 for a block with one).
    Instance = 7,
}

/// How a block's instances are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Per shader engine, one instance each (SQ): `[XCC] INSTANCE[0:0] SE`.
    PerShaderEngine,
    /// Per shader engine, one instance per compute unit of the engine
    /// (TCP): `[XCC] INSTANCE SE`.
    PerComputeUnit,
    /// Global, one instance (GRBM): `[XCC] INSTANCE[0:0]`.
    Global,
    /// Global, one instance per L2 channel (TCC): `[XCC] INSTANCE`.
    PerL2Channel,
    /// An agent property: one value, `INSTANCE[0:0]`.
    Property,
}

impl Layout {
    /// The dimensions and their extents on `shape`, outermost first; values
    /// are laid out row-major over them.
    pub fn dims(self, shape: &Shape) -> Vec<(Dim, u32)> {
        let mut dims = Vec::new();
        if shape.xccs > 1 && self != Layout::Property {
            dims.push((Dim::Xcc, shape.xccs));
        }
        let cus_per_se = shape
            .compute_units_per_xcc
            .div_ceil(shape.shader_engines_per_xcc)
            .clamp(1, 16);
        match self {
            Layout::PerShaderEngine => {
                dims.push((Dim::Instance, 1));
                dims.push((Dim::ShaderEngine, shape.shader_engines_per_xcc));
            }
            Layout::PerComputeUnit => {
                dims.push((Dim::Instance, cus_per_se));
                dims.push((Dim::ShaderEngine, shape.shader_engines_per_xcc));
            }
            Layout::Global | Layout::Property => dims.push((Dim::Instance, 1)),
            Layout::PerL2Channel => dims.push((Dim::Instance, shape.l2_channels_per_xcc)),
        }
        dims
    }
}

/// A counter the simulated GPU produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modelled {
    /// The counter's name, as AMD's definitions spell it (an agent
    /// property's lower-case label for a property).
    pub name: &'static str,
    /// Its hardware block (empty for a property).
    pub block: &'static str,
    /// How its instances are laid out.
    pub layout: Layout,
    /// Architectures it has this name on (empty: every one).
    pub archs: &'static [&'static str],
}

const SQ: Layout = Layout::PerShaderEngine;
const TCP: Layout = Layout::PerComputeUnit;
const TCC: Layout = Layout::PerL2Channel;
const GRBM: Layout = Layout::Global;
const PROP: Layout = Layout::Property;
const GFX90A: &[&str] = &["gfx90a", "gfx908"];

macro_rules! modelled {
    ($($name:literal $block:literal $layout:ident $($archs:ident)?),+ $(,)?) => {
        /// Every counter the model produces, with its block and layout.
        pub const MODELLED: &[Modelled] = &[$(Modelled {
            name: $name,
            block: $block,
            layout: $layout,
            archs: modelled!(@archs $($archs)?),
        }),+];
    };
    (@archs) => { &[] };
    (@archs $archs:ident) => { $archs };
}

const NOT_GFX90A: &[&str] = &["gfx940", "gfx941", "gfx942", "gfx950"];

modelled! {
    "SQ_WAVES" "SQ" SQ,
    "SQ_BUSY_CYCLES" "SQ" SQ,
    "SQ_WAVE_CYCLES" "SQ" SQ,
    "SQ_INSTS_VALU" "SQ" SQ,
    "SQ_INSTS_SALU" "SQ" SQ,
    "SQ_INSTS_SMEM" "SQ" SQ,
    "SQ_INSTS_LDS" "SQ" SQ,
    "SQ_INSTS_VMEM_RD" "SQ" SQ,
    "SQ_INSTS_VMEM_WR" "SQ" SQ,
    "GRBM_COUNT" "GRBM" GRBM,
    "GRBM_GUI_ACTIVE" "GRBM" GRBM,
    "TCP_TOTAL_CACHE_ACCESSES" "TCP" TCP,
    "TCP_TCC_READ_REQ" "TCP" TCP,
    "TCP_TCC_WRITE_REQ" "TCP" TCP,
    "TCC_REQ" "TCC" TCC,
    "TCC_READ" "TCC" TCC,
    "TCC_WRITE" "TCC" TCC,
    "TCC_HIT" "TCC" TCC,
    "TCC_MISS" "TCC" TCC,
    "TCC_BUBBLE" "TCC" TCC,
    "TCC_EA_RDREQ" "TCC" TCC GFX90A,
    "TCC_EA_RDREQ_32B" "TCC" TCC GFX90A,
    "TCC_EA_WRREQ" "TCC" TCC GFX90A,
    "TCC_EA_WRREQ_64B" "TCC" TCC GFX90A,
    "TCC_EA0_RDREQ" "TCC" TCC NOT_GFX90A,
    "TCC_EA0_RDREQ_32B" "TCC" TCC NOT_GFX90A,
    "TCC_EA0_WRREQ" "TCC" TCC NOT_GFX90A,
    "TCC_EA0_WRREQ_64B" "TCC" TCC NOT_GFX90A,
    "simd_count" "" PROP,
    "simd_per_cu" "" PROP,
    "array_count" "" PROP,
    "simd_arrays_per_engine" "" PROP,
    "cu_per_simd_array" "" PROP,
    "wave_front_size" "" PROP,
    "max_waves_per_simd" "" PROP,
    "num_xcc" "" PROP,
    "max_engine_clk_ccompute" "" PROP,
}

/// The counters the model produces on a device of architecture `arch`.
pub fn modelled_on(arch: &str) -> impl Iterator<Item = &'static Modelled> + '_ {
    MODELLED
        .iter()
        .filter(move |m| m.archs.is_empty() || m.archs.contains(&arch))
}

/// What the simulator knows of one dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// AQL grid size in work-items.
    pub grid: [u32; 3],
    /// AQL workgroup size in work-items.
    pub workgroup: [u16; 3],
    /// The dispatch's duration from the cost model, in ns.
    pub duration_ns: u64,
    /// The kernel's mix.
    pub mix: ResolvedMix,
}

impl Scenario {
    /// The resolved mix of the kernel named `kernel_name`: the first
    /// `[[kernels.cost]]` that matches, field by field over `[kernels.mix]`.
    pub fn kernel_mix(&self, kernel_name: &str) -> ResolvedMix {
        let over = self
            .kernels
            .cost
            .iter()
            .find(|c| kernel_name.contains(&c.pattern))
            .and_then(|c| c.mix)
            .unwrap_or_default();
        over.resolve(&self.kernels.mix)
    }
}

impl Launch {
    /// The dispatch's waves: per workgroup ⌈work-items / wave size⌉, where
    /// the workgroups at the grid's upper edges hold only what is left.
    pub fn waves(&self, wave_size: u32) -> u64 {
        // Per dimension: (how many workgroups, their size) for the full
        // ones and the one partial one at the edge.
        let classes: Vec<[(u64, u64); 2]> = (0..3)
            .map(|d| {
                let g = u64::from(self.grid[d].max(1));
                let w = u64::from(self.workgroup[d].max(1)).min(g);
                [(g / w, w), (u64::from(g % w != 0), g % w)]
            })
            .collect();
        let mut waves = 0u64;
        for &(nx, sx) in &classes[0] {
            for &(ny, sy) in &classes[1] {
                for &(nz, sz) in &classes[2] {
                    let items = sx * sy * sz;
                    if nx * ny * nz == 0 || items == 0 {
                        continue;
                    }
                    waves += nx * ny * nz * items.div_ceil(u64::from(wave_size.max(1)));
                }
            }
        }
        waves
    }

    /// Work-items in the grid.
    pub fn items(&self) -> u64 {
        self.grid.iter().map(|&g| u64::from(g.max(1))).product()
    }

    /// Engine cycles the dispatch lasted: ⌈duration_ns × MHz / 1000⌉.
    pub fn cycles(&self, shape: &Shape) -> u64 {
        (self.duration_ns * u64::from(shape.clock_mhz)).div_ceil(1000)
    }
}

/// `total` split over `n` instances as evenly as integers allow.
fn split(total: u64, n: u32) -> Vec<u64> {
    let n64 = u64::from(n.max(1));
    (0..n64)
        .map(|i| total / n64 + u64::from(i < total % n64))
        .collect()
}

/// The values of counter `name` for `launch` on a device of `shape` and
/// architecture `arch`, one per instance (row-major over the counter's
/// [`Modelled::layout`]'s dimensions); `None` for a counter the model does not produce on
/// that architecture.
pub fn sample(arch: &str, shape: &Shape, launch: &Launch, name: &str) -> Option<Vec<u64>> {
    let m = modelled_on(arch).find(|m| m.name == name)?;
    let instances: u32 = m.layout.dims(shape).iter().map(|&(_, n)| n).product();
    let mix = &launch.mix;
    let waves = launch.waves(shape.wave_size);
    let cycles = launch.cycles(shape);
    let items = launch.items();
    let per_se = || split(waves, instances);
    let read_req = (items * mix.bytes_read_per_item).div_ceil(64);
    let write_req = (items * mix.bytes_written_per_item).div_ceil(64);
    let footprint_lines = (items * mix.footprint_per_item).div_ceil(128);
    let l2_bytes = shape.l2_bytes_per_xcc * u64::from(shape.xccs);
    let misses = if items * mix.footprint_per_item <= l2_bytes {
        footprint_lines.min(read_req + write_req)
    } else {
        read_req + write_req
    };
    let read_misses = misses.min(read_req);
    let insts = |per_wave: u64| per_se().into_iter().map(|w| w * per_wave).collect();
    let spread = |total: u64| split(total, instances);
    let values = match name {
        "SQ_WAVES" => per_se(),
        "SQ_BUSY_CYCLES" => per_se()
            .into_iter()
            .map(|w| if w > 0 { cycles } else { 0 })
            .collect(),
        "SQ_WAVE_CYCLES" => {
            let slots = u64::from(
                shape
                    .compute_units_per_xcc
                    .div_ceil(shape.shader_engines_per_xcc)
                    * shape.simds_per_cu
                    * shape.max_waves_per_simd,
            );
            per_se()
                .into_iter()
                .map(|w| (w.min(slots) * cycles).div_ceil(4))
                .collect()
        }
        "SQ_INSTS_VALU" => insts(mix.valu_per_wave),
        "SQ_INSTS_SALU" => insts(mix.salu_per_wave),
        "SQ_INSTS_SMEM" => insts(mix.smem_per_wave),
        "SQ_INSTS_LDS" => insts(mix.lds_per_wave),
        "SQ_INSTS_VMEM_RD" => insts(mix.vmem_rd_per_wave),
        "SQ_INSTS_VMEM_WR" => insts(mix.vmem_wr_per_wave),
        "GRBM_COUNT" | "GRBM_GUI_ACTIVE" => vec![cycles; instances as usize],
        "TCP_TOTAL_CACHE_ACCESSES" | "TCC_REQ" => spread(read_req + write_req),
        "TCP_TCC_READ_REQ" | "TCC_READ" => spread(read_req),
        "TCP_TCC_WRITE_REQ" | "TCC_WRITE" | "TCC_EA_WRREQ" | "TCC_EA0_WRREQ"
        | "TCC_EA_WRREQ_64B" | "TCC_EA0_WRREQ_64B" => spread(write_req),
        // Every request is 64 bytes: none of 32 or 128.
        "TCC_EA_RDREQ_32B" | "TCC_EA0_RDREQ_32B" | "TCC_BUBBLE" => spread(0),
        "TCC_MISS" => spread(misses),
        "TCC_HIT" => spread(read_req + write_req - misses),
        "TCC_EA_RDREQ" | "TCC_EA0_RDREQ" => spread(read_misses),
        "simd_count" => vec![u64::from(
            shape.compute_units_per_xcc * shape.xccs * shape.simds_per_cu,
        )],
        "simd_per_cu" => vec![u64::from(shape.simds_per_cu)],
        // One shader array per engine.
        "array_count" => vec![u64::from(shape.shader_engines_per_xcc * shape.xccs)],
        "simd_arrays_per_engine" => vec![1],
        "cu_per_simd_array" => vec![u64::from(
            shape
                .compute_units_per_xcc
                .div_ceil(shape.shader_engines_per_xcc),
        )],
        "wave_front_size" => vec![u64::from(shape.wave_size)],
        "max_waves_per_simd" => vec![u64::from(shape.max_waves_per_simd)],
        "num_xcc" => vec![u64::from(shape.xccs)],
        "max_engine_clk_ccompute" => vec![u64::from(shape.clock_mhz)],
        _ => return None,
    };
    debug_assert_eq!(values.len(), instances as usize, "{name}");
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mix;

    fn launch(grid: [u32; 3], workgroup: [u16; 3]) -> Launch {
        Launch {
            grid,
            workgroup,
            duration_ns: 10_000,
            mix: Mix::default().resolve(&Mix::default()),
        }
    }

    #[test]
    fn waves_count_edge_workgroups_as_what_is_left() {
        // 1000 items in workgroups of 256: three of 256 (4 waves each) and
        // one of 232 (4 waves).
        assert_eq!(launch([1000, 1, 1], [256, 1, 1]).waves(64), 16);
        // 100 items in workgroups of 64: one full (1 wave), one of 36 (1).
        assert_eq!(launch([100, 1, 1], [64, 1, 1]).waves(64), 2);
        // 2-D: 100×3 in 16×2: x 6 full of 16 + one of 4; y one of 2, one of 1.
        // Workgroups: 6×(16·2=32 → 1) + 6×(16·1 → 1) + (4·2 → 1) + (4·1 → 1) = 14.
        assert_eq!(launch([100, 3, 1], [16, 2, 1]).waves(64), 14);
        // A workgroup larger than the grid is the grid.
        assert_eq!(launch([10, 1, 1], [256, 1, 1]).waves(64), 1);
    }

    #[test]
    fn instances_sum_to_the_whole_and_follow_the_shape() {
        let device = Device::default();
        let shape = device.shape();
        let l = launch([1 << 20, 1, 1], [256, 1, 1]);
        let waves = sample("gfx90a", &shape, &l, "SQ_WAVES").unwrap();
        assert_eq!(waves.len(), 8);
        assert_eq!(waves.iter().sum::<u64>(), (1 << 20) / 64);
        let cycles = sample("gfx90a", &shape, &l, "GRBM_GUI_ACTIVE").unwrap();
        assert_eq!(cycles, vec![17_000]);
        let tcc = sample("gfx90a", &shape, &l, "TCC_REQ").unwrap();
        assert_eq!(tcc.len(), 32);
        // 8 + 4 bytes an item in 64-byte requests.
        assert_eq!(tcc.iter().sum::<u64>(), (12 << 20) / 64);
        let hit = sample("gfx90a", &shape, &l, "TCC_HIT").unwrap();
        let miss = sample("gfx90a", &shape, &l, "TCC_MISS").unwrap();
        assert_eq!(
            hit.iter().sum::<u64>() + miss.iter().sum::<u64>(),
            tcc.iter().sum::<u64>()
        );
        let mi300 = Device {
            arch: "gfx942".into(),
            compute_units: 304,
            ..Device::default()
        };
        let s = mi300.shape();
        assert_eq!(sample("gfx942", &s, &l, "SQ_WAVES").unwrap().len(), 32);
        assert_eq!(
            sample("gfx942", &s, &l, "simd_count").unwrap(),
            vec![304 * 4]
        );
        assert_eq!(
            Layout::PerShaderEngine.dims(&s),
            vec![(Dim::Xcc, 8), (Dim::Instance, 1), (Dim::ShaderEngine, 4)]
        );
        assert!(sample("gfx942", &s, &l, "TCC_EA_RDREQ").is_none());
        assert!(sample("gfx90a", &shape, &l, "TCC_EA0_RDREQ").is_none());
        assert!(sample("gfx90a", &shape, &l, "SQ_INSTS_MFMA").is_none());
    }

    #[test]
    fn the_mix_falls_back_field_by_field() {
        let defaults = Mix {
            valu_per_wave: Some(100),
            ..Mix::default()
        };
        let over = Mix {
            bytes_read_per_item: Some(16),
            ..Mix::default()
        };
        let m = over.resolve(&defaults);
        assert_eq!(m.valu_per_wave, 100);
        assert_eq!(m.bytes_read_per_item, 16);
        assert_eq!(m.footprint_per_item, 20);
        assert_eq!(m.salu_per_wave, 8);
    }
}

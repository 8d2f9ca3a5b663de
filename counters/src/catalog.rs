//! One agent's counters: the definitions for its architecture, with ids,
//! evaluation over the hardware's instances, and the one-pass limit.

use std::collections::{BTreeMap, BTreeSet};

use crate::defs::{Body, Definitions};
use crate::expr::{Expr, Op, Reduction};

/// A dimension of a counter's instances, numbered as rocprofiler-sdk's
/// `rocprofiler_counter_dimension_id_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    /// `DIMENSION_XCC`
    Xcc = 1,
    /// `DIMENSION_AID`
    Aid = 2,
    /// `DIMENSION_SHADER_ENGINE`
    ShaderEngine = 3,
    /// `DIMENSION_AGENT`
    Agent = 4,
    /// `DIMENSION_SHADER_ARRAY`
    ShaderArray = 5,
    /// `DIMENSION_WGP`
    Wgp = 6,
    /// `DIMENSION_INSTANCE`
    Instance = 7,
}

impl Dimension {
    /// Every dimension, by id.
    pub const ALL: [Dimension; 7] = [
        Dimension::Xcc,
        Dimension::Aid,
        Dimension::ShaderEngine,
        Dimension::Agent,
        Dimension::ShaderArray,
        Dimension::Wgp,
        Dimension::Instance,
    ];

    /// The SDK's name (`DIMENSION_SHADER_ENGINE`).
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Xcc => "DIMENSION_XCC",
            Dimension::Aid => "DIMENSION_AID",
            Dimension::ShaderEngine => "DIMENSION_SHADER_ENGINE",
            Dimension::Agent => "DIMENSION_AGENT",
            Dimension::ShaderArray => "DIMENSION_SHADER_ARRAY",
            Dimension::Wgp => "DIMENSION_WGP",
            Dimension::Instance => "DIMENSION_INSTANCE",
        }
    }

    /// The dimension with SDK id `id`.
    pub fn from_id(id: u32) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| *d as u32 == id)
    }

    fn by_name(name: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// A counter's values over its instances: dimensions (outermost first,
/// with their extents) and the values, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// The dimensions and extents.
    pub dims: Vec<(Dimension, u32)>,
    /// One value per instance.
    pub values: Vec<f64>,
}

impl Tensor {
    /// One value with no instances to tell apart (`INSTANCE[0:0]`).
    pub fn scalar(value: f64) -> Tensor {
        Tensor {
            dims: vec![(Dimension::Instance, 1)],
            values: vec![value],
        }
    }

    /// The sum over every instance: what rocprofv3's
    /// `counter_collection.csv` writes for a dispatch.
    pub fn total(&self) -> f64 {
        self.values.iter().sum()
    }

    /// The position of instance `index` (row-major) in each dimension.
    pub fn position(&self, index: usize) -> Vec<(Dimension, u32)> {
        let mut rest = index;
        let mut out = vec![(Dimension::Instance, 0); self.dims.len()];
        for (slot, &(dim, extent)) in out.iter_mut().zip(&self.dims).rev() {
            let extent = extent.max(1) as usize;
            *slot = (dim, (rest % extent) as u32);
            rest /= extent;
        }
        out
    }

    fn dims_text(&self) -> String {
        let d: Vec<String> = self
            .dims
            .iter()
            .map(|(d, n)| format!("{}[0:{}]", d.name(), n.saturating_sub(1)))
            .collect();
        d.join(" ")
    }
}

/// What a counter is on an agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A property of the agent (`simd_count`), a constant.
    Constant,
    /// As its definition for the agent's architecture says: a hardware
    /// event of a block, or an expression over other counters.
    Defined(Body),
}

/// A counter of one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Counter {
    /// Its id on this agent (the agent's properties first, then the
    /// definitions in file order, as rocprofiler-sdk numbers them).
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// What it is.
    pub kind: Kind,
}

/// Where hardware counters and agent properties get their values: the
/// GPU (the simulated one's model, or a real one's samples).
pub trait Source {
    /// The values of hardware counter or property `counter` (with its
    /// block, empty for a property), or `None` when the agent cannot count
    /// it.
    fn read(&self, counter: &str, block: &str) -> Option<Tensor>;
}

/// Why a counter could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// No counter of that name on the agent.
    #[error("{0} is not a counter of {1}")]
    Unknown(String, String),
    /// It needs a hardware counter the agent cannot count.
    #[error("{counter} needs {missing}, which {arch} cannot count")]
    Unsupported {
        /// The counter asked for.
        counter: String,
        /// The hardware counter or property that is missing.
        missing: String,
        /// The agent's architecture (and what it is, e.g. "the simulated gfx90a").
        arch: String,
    },
    /// Its expression refers to itself.
    #[error("{0} is defined in terms of itself")]
    Cycle(String),
    /// Its expression combines values that do not fit together.
    #[error("{counter}: {why}")]
    Shape {
        /// The counter.
        counter: String,
        /// What does not fit.
        why: String,
    },
}

/// Too many hardware counters of one block for one pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{block} has {limit} counter registers, and {} need {}: {} (ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT)",
    requested.join(" "), needed.len(), needed.join(" ")
)]
pub struct OverLimit {
    /// The block.
    pub block: String,
    /// Its registers.
    pub limit: u32,
    /// The requested counters that need it.
    pub requested: Vec<String>,
    /// The distinct hardware counters of the block they need.
    pub needed: Vec<String>,
}

/// Counter registers per block on the gfx9 family (gfx908, gfx90a,
/// gfx942): how many distinct events of the block one pass can count.
pub fn block_limit(block: &str) -> u32 {
    match block {
        "SQ" | "MC_VM_L2" => 8,
        "SPI" => 6,
        "GRBM" | "CPC" | "CPF" | "CPG" | "TA" | "TD" | "GCEA" | "ATC_L2" | "SDMA" => 2,
        _ => 4,
    }
}

/// One agent's counters.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    /// The architecture.
    pub arch: String,
    /// Its counters: the properties, then the definitions in file order.
    pub counters: Vec<Counter>,
}

impl Definitions {
    /// The agent properties the expressions for `arch` name: every name an
    /// expression reads that is no counter of the architecture (the SDK's
    /// constants, `simd_count` and the like), each once.
    pub fn properties_named(&self, arch: &str) -> Vec<String> {
        let defined = |name: &str| {
            self.counters.iter().any(|c| {
                c.name == name
                    && c.definitions
                        .iter()
                        .any(|d| d.architectures.iter().any(|a| a == arch))
            })
        };
        let mut out: Vec<String> = Vec::new();
        for c in &self.counters {
            for d in c
                .definitions
                .iter()
                .filter(|d| d.architectures.iter().any(|a| a == arch))
            {
                if let Body::Derived { expr, .. } = &d.body {
                    for name in expr.counters() {
                        if !defined(name) && !out.iter().any(|o| o == name) {
                            out.push(name.to_string());
                        }
                    }
                }
            }
        }
        out
    }

    /// The counters of an agent of architecture `arch` with these
    /// properties (the constants an expression may name).
    pub fn catalog(&self, arch: &str, properties: &[&str]) -> Catalog {
        let mut counters: Vec<Counter> = properties
            .iter()
            .map(|p| Counter {
                id: 0,
                name: p.to_string(),
                description: format!("Constant value {p} of the agent's properties"),
                kind: Kind::Constant,
            })
            .collect();
        for c in &self.counters {
            let Some(def) = c
                .definitions
                .iter()
                .find(|d| d.architectures.iter().any(|a| a == arch))
            else {
                continue;
            };
            let kind = Kind::Defined(def.body.clone());
            counters.retain(|k| k.name != c.name);
            counters.push(Counter {
                id: 0,
                name: c.name.clone(),
                description: c.description.clone(),
                kind,
            });
        }
        for (i, c) in counters.iter_mut().enumerate() {
            c.id = i as u64;
        }
        Catalog {
            arch: arch.into(),
            counters,
        }
    }
}

impl Catalog {
    /// The counter named `name`.
    pub fn get(&self, name: &str) -> Option<&Counter> {
        self.counters.iter().find(|c| c.name == name)
    }

    /// Up to `n` names closest to `name` (for "did you mean").
    pub fn nearest(&self, name: &str, n: usize) -> Vec<&str> {
        let upper = name.to_ascii_uppercase();
        let mut scored: Vec<(f64, &str)> = self
            .counters
            .iter()
            .map(|c| {
                let score = strsim::jaro_winkler(&upper, &c.name.to_ascii_uppercase());
                (score, c.name.as_str())
            })
            .filter(|(s, _)| *s > 0.7)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.into_iter().take(n).map(|(_, name)| name).collect()
    }

    /// The hardware counters (name → block) `name` needs, derived
    /// counters expanded; properties need none.
    pub fn hardware_of(&self, name: &str) -> Result<BTreeMap<String, String>, EvalError> {
        let mut out = BTreeMap::new();
        self.collect_hardware(name, &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    fn collect_hardware(
        &self,
        name: &str,
        stack: &mut Vec<String>,
        out: &mut BTreeMap<String, String>,
    ) -> Result<(), EvalError> {
        let counter = self
            .get(name)
            .ok_or_else(|| EvalError::Unknown(name.into(), self.arch.clone()))?;
        match &counter.kind {
            Kind::Constant => Ok(()),
            Kind::Defined(Body::Hardware { block, .. }) => {
                out.insert(name.into(), block.clone());
                Ok(())
            }
            Kind::Defined(Body::Derived { expr, .. }) => {
                if stack.iter().any(|s| s == name) {
                    return Err(EvalError::Cycle(name.into()));
                }
                stack.push(name.into());
                for dep in expr.counters() {
                    self.collect_hardware(dep, stack, out)?;
                }
                stack.pop();
                Ok(())
            }
        }
    }

    /// Checks that `names` can be counted together in one pass.
    pub fn check_one_pass(&self, names: &[&str]) -> Result<(), CheckError> {
        let mut per_block: BTreeMap<String, (BTreeSet<String>, Vec<String>)> = BTreeMap::new();
        for &name in names {
            for (hw, block) in self.hardware_of(name)? {
                let entry = per_block.entry(block).or_default();
                entry.0.insert(hw);
                if !entry.1.iter().any(|n| n == name) {
                    entry.1.push(name.into());
                }
            }
        }
        for (block, (needed, requested)) in per_block {
            let limit = block_limit(&block);
            if needed.len() > limit as usize {
                return Err(CheckError::OverLimit(OverLimit {
                    block,
                    limit,
                    requested,
                    needed: needed.into_iter().collect(),
                }));
            }
        }
        Ok(())
    }

    /// `names` split into passes that each fit the hardware, in order,
    /// each counter in the first pass it fits in. A counter that does not
    /// fit in a pass on its own is an error.
    pub fn passes(&self, names: &[&str]) -> Result<Vec<Vec<String>>, CheckError> {
        let mut passes: Vec<Vec<String>> = Vec::new();
        for &name in names {
            self.check_one_pass(&[name])?;
            let fits = passes.iter().position(|p| {
                let mut with: Vec<&str> = p.iter().map(String::as_str).collect();
                with.push(name);
                self.check_one_pass(&with).is_ok()
            });
            match fits {
                Some(i) => passes[i].push(name.into()),
                None => passes.push(vec![name.into()]),
            }
        }
        Ok(passes)
    }

    /// Evaluates counter `name` over the values `source` gives.
    pub fn evaluate(&self, name: &str, source: &dyn Source) -> Result<Tensor, EvalError> {
        self.evaluate_in(name, source, &mut Vec::new())
    }

    /// `NAME[0:n]` for each dimension, space-separated, as rocprofv3-avail
    /// writes them.
    pub fn dimensions_text(&self, name: &str, source: &dyn Source) -> Result<String, EvalError> {
        Ok(self.evaluate(name, source)?.dims_text())
    }

    fn evaluate_in(
        &self,
        name: &str,
        source: &dyn Source,
        stack: &mut Vec<String>,
    ) -> Result<Tensor, EvalError> {
        let counter = self
            .get(name)
            .ok_or_else(|| EvalError::Unknown(name.into(), self.arch.clone()))?;
        let unsupported = |missing: &str| EvalError::Unsupported {
            counter: stack.first().map_or(name, String::as_str).into(),
            missing: missing.into(),
            arch: self.arch.clone(),
        };
        match &counter.kind {
            Kind::Constant => source.read(name, "").ok_or_else(|| unsupported(name)),
            Kind::Defined(Body::Hardware { block, .. }) => {
                source.read(name, block).ok_or_else(|| unsupported(name))
            }
            Kind::Defined(Body::Derived { expr, .. }) => {
                if stack.iter().any(|s| s == name) {
                    return Err(EvalError::Cycle(name.into()));
                }
                stack.push(name.into());
                let out = self.eval_expr(expr, source, stack);
                stack.pop();
                out
            }
        }
    }

    fn eval_expr(
        &self,
        e: &Expr,
        source: &dyn Source,
        stack: &mut Vec<String>,
    ) -> Result<Tensor, EvalError> {
        let here = stack.last().cloned().unwrap_or_default();
        let shape = |why: String| EvalError::Shape {
            counter: here.clone(),
            why,
        };
        Ok(match e {
            Expr::Number(n) => Tensor::scalar(*n),
            Expr::Counter(name) => self.evaluate_in(name, source, stack)?,
            Expr::Negate(a) => {
                let mut t = self.eval_expr(a, source, stack)?;
                t.values.iter_mut().for_each(|v| *v = -*v);
                t
            }
            Expr::Accumulate(a, _) => self.eval_expr(a, source, stack)?,
            Expr::Binary(a, op, b) => {
                let a = self.eval_expr(a, source, stack)?;
                let b = self.eval_expr(b, source, stack)?;
                binary(a, *op, b).map_err(shape)?
            }
            Expr::Reduce(a, how, dims) => {
                let a = self.eval_expr(a, source, stack)?;
                let dims: Vec<Dimension> =
                    dims.iter().filter_map(|d| Dimension::by_name(d)).collect();
                reduce(a, *how, &dims)
            }
            Expr::Select(a, picks) => {
                let mut t = self.eval_expr(a, source, stack)?;
                for (dim, indices) in picks {
                    let Some(dim) = Dimension::by_name(dim) else {
                        continue;
                    };
                    t = select(t, dim, indices).map_err(shape)?;
                }
                t
            }
        })
    }
}

/// Why a set of counters cannot be collected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// A counter is unknown or cannot be evaluated.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Over a block's registers.
    #[error(transparent)]
    OverLimit(#[from] OverLimit),
}

fn binary(a: Tensor, op: Op, b: Tensor) -> Result<Tensor, String> {
    let f = |x: f64, y: f64| match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        // As the SDK: a division by zero is 0.
        Op::Div => {
            if y == 0.0 {
                0.0
            } else {
                x / y
            }
        }
    };
    if b.values.len() == 1 {
        let y = b.values[0];
        return Ok(Tensor {
            values: a.values.iter().map(|&x| f(x, y)).collect(),
            dims: a.dims,
        });
    }
    if a.values.len() == 1 {
        let x = a.values[0];
        return Ok(Tensor {
            values: b.values.iter().map(|&y| f(x, y)).collect(),
            dims: b.dims,
        });
    }
    if a.dims != b.dims {
        return Err(format!(
            "cannot combine values over {} with values over {} (reduce one first)",
            a.dims_text(),
            b.dims_text()
        ));
    }
    Ok(Tensor {
        values: a
            .values
            .iter()
            .zip(&b.values)
            .map(|(&x, &y)| f(x, y))
            .collect(),
        dims: a.dims,
    })
}

fn reduce(t: Tensor, how: Reduction, away: &[Dimension]) -> Tensor {
    let all = away.is_empty();
    let keep: Vec<usize> = (0..t.dims.len())
        .filter(|&i| !all && !away.contains(&t.dims[i].0))
        .collect();
    let dims: Vec<(Dimension, u32)> = keep.iter().map(|&i| t.dims[i]).collect();
    let groups: usize = dims.iter().map(|&(_, n)| n.max(1) as usize).product();
    let mut acc: Vec<Vec<f64>> = vec![Vec::new(); groups];
    for (i, &v) in t.values.iter().enumerate() {
        let pos = t.position(i);
        let mut g = 0usize;
        for (&k, &(_, n)) in keep.iter().zip(&dims) {
            g = g * n.max(1) as usize + pos[k].1 as usize;
        }
        acc[g].push(v);
    }
    let values = acc
        .into_iter()
        .map(|vs| match how {
            Reduction::Sum => vs.iter().sum(),
            Reduction::Avr => {
                if vs.is_empty() {
                    0.0
                } else {
                    vs.iter().sum::<f64>() / vs.len() as f64
                }
            }
            Reduction::Min => vs.iter().copied().fold(f64::INFINITY, f64::min),
            Reduction::Max => vs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
        .collect();
    if dims.is_empty() {
        return Tensor {
            dims: vec![(Dimension::Instance, 1)],
            values,
        };
    }
    Tensor { dims, values }
}

fn select(t: Tensor, dim: Dimension, indices: &[u64]) -> Result<Tensor, String> {
    let Some(k) = t.dims.iter().position(|&(d, _)| d == dim) else {
        return Ok(t);
    };
    let extent = t.dims[k].1;
    if let Some(bad) = indices.iter().find(|&&i| i >= u64::from(extent)) {
        return Err(format!(
            "select {}={bad}: the dimension has {extent} instances",
            dim.name()
        ));
    }
    let mut dims = t.dims.clone();
    dims[k].1 = indices.len() as u32;
    let mut values = Vec::new();
    for (i, &v) in t.values.iter().enumerate() {
        let pos = t.position(i)[k].1;
        if indices.contains(&u64::from(pos)) {
            values.push(v);
        }
    }
    Ok(Tensor { dims, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gfx90a-like: SQ over 8 shader engines, TCC over 4 channels, GRBM one.
    struct Fake;
    impl Source for Fake {
        fn read(&self, counter: &str, block: &str) -> Option<Tensor> {
            let per = |n: u32, base: f64| Tensor {
                dims: vec![(Dimension::Instance, 1), (Dimension::ShaderEngine, n)],
                values: (0..n).map(|i| base + f64::from(i)).collect(),
            };
            Some(match (counter, block) {
                ("SQ_WAVES", _) => per(8, 10.0),
                ("SQ_INSTS_VALU", _) => per(8, 100.0),
                ("GRBM_GUI_ACTIVE", _) => Tensor::scalar(500.0),
                ("GRBM_COUNT", _) => Tensor::scalar(1000.0),
                ("TCC_HIT", _) => Tensor {
                    dims: vec![(Dimension::Instance, 4)],
                    values: vec![1.0, 2.0, 3.0, 4.0],
                },
                ("simd_count", "") => Tensor::scalar(416.0),
                ("simd_per_cu", "") => Tensor::scalar(4.0),
                _ => return None,
            })
        }
    }

    fn catalog() -> Catalog {
        Definitions::shipped().catalog("gfx90a", &["simd_count", "simd_per_cu"])
    }

    #[test]
    fn the_properties_expressions_name_are_found() {
        let mut p = Definitions::shipped().properties_named("gfx90a");
        p.sort();
        assert_eq!(
            p,
            [
                "array_count",
                "simd_arrays_per_engine",
                "simd_count",
                "simd_per_cu",
                "wave_front_size"
            ]
        );
    }

    #[test]
    fn derived_counters_evaluate_over_instances() {
        let c = catalog();
        assert_eq!(c.evaluate("GPU_UTIL", &Fake).unwrap().values, vec![50.0]);
        // Σ(10..17) = 108.
        assert_eq!(c.evaluate("Wavefronts", &Fake).unwrap().values, vec![108.0]);
        // Σ(100..107) / 108.
        let v = c.evaluate("VALUInsts", &Fake).unwrap().values[0];
        assert!((v - 828.0 / 108.0).abs() < 1e-12);
        assert_eq!(c.evaluate("CU_NUM", &Fake).unwrap().values, vec![104.0]);
        assert_eq!(c.evaluate("TCC_HIT_sum", &Fake).unwrap().values, vec![10.0]);
        let raw = c.evaluate("SQ_WAVES", &Fake).unwrap();
        assert_eq!(
            raw.dims_text(),
            "DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:7]"
        );
        assert_eq!(
            raw.position(9 % 8),
            vec![(Dimension::Instance, 0), (Dimension::ShaderEngine, 1)]
        );
        // A counter the source cannot count is named, through the derived one.
        let e = c.evaluate("MemUnitBusy", &Fake).unwrap_err();
        assert_eq!(
            e.to_string(),
            "MemUnitBusy needs TA_TA_BUSY, which gfx90a cannot count"
        );
    }

    #[test]
    fn reduce_select_and_shapes() {
        let t = Tensor {
            dims: vec![(Dimension::Xcc, 2), (Dimension::ShaderEngine, 3)],
            values: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        };
        let r = reduce(t.clone(), Reduction::Sum, &[Dimension::ShaderEngine]);
        assert_eq!(r.dims, vec![(Dimension::Xcc, 2)]);
        assert_eq!(r.values, vec![6.0, 15.0]);
        let r = reduce(t.clone(), Reduction::Max, &[Dimension::Xcc]);
        assert_eq!(r.values, vec![4.0, 5.0, 6.0]);
        let r = reduce(t.clone(), Reduction::Avr, &[]);
        assert_eq!(r.values, vec![3.5]);
        assert_eq!(r.dims, vec![(Dimension::Instance, 1)]);
        let s = select(t.clone(), Dimension::Xcc, &[1]).unwrap();
        assert_eq!(s.values, vec![4.0, 5.0, 6.0]);
        assert!(select(t.clone(), Dimension::Xcc, &[2]).is_err());
        let other = Tensor {
            dims: vec![(Dimension::Instance, 6)],
            values: vec![0.0; 6],
        };
        assert!(binary(t.clone(), Op::Add, other).is_err());
        let d = binary(t, Op::Div, Tensor::scalar(0.0)).unwrap();
        assert!(d.values.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn passes_respect_block_registers() {
        let c = catalog();
        assert!(c
            .check_one_pass(&["GRBM_COUNT", "GRBM_GUI_ACTIVE", "SQ_WAVES"])
            .is_ok());
        // GPU_UTIL needs both GRBM counters; a third GRBM one does not fit.
        let e = c
            .check_one_pass(&[
                "GPU_UTIL",
                "MemUnitBusy",
                "TCC_HIT",
                "TCC_MISS",
                "TCC_REQ",
                "TCC_READ",
                "TCC_WRITE",
            ])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "TCC has 4 counter registers, and TCC_HIT TCC_MISS TCC_REQ TCC_READ TCC_WRITE need 5: \
             TCC_HIT TCC_MISS TCC_READ TCC_REQ TCC_WRITE (ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT)"
        );
        let p = c
            .passes(&[
                "TCC_HIT",
                "TCC_MISS",
                "TCC_REQ",
                "TCC_READ",
                "TCC_WRITE",
                "SQ_WAVES",
            ])
            .unwrap();
        assert_eq!(
            p,
            vec![
                vec!["TCC_HIT", "TCC_MISS", "TCC_REQ", "TCC_READ", "SQ_WAVES"],
                vec!["TCC_WRITE"]
            ]
        );
        assert!(matches!(
            c.check_one_pass(&["NOPE"]),
            Err(CheckError::Eval(EvalError::Unknown(..)))
        ));
        assert_eq!(c.nearest("SQ_WAVE", 3)[0], "SQ_WAVES");
    }
}

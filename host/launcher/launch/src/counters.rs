//! Hardware counters of the agents a run would profile: which definitions
//! apply, each agent's counters, what the simulated GPU can count, and
//! whether a requested set (`--pmc`) can be collected.
//!
//! The agents are the simulated GPU's (the scenario of
//! `ROCWASM_SIM_SCENARIO`, else one gfx90a): rocwasm's only GPUs here.
//! Their base counters come from the simulator's model
//! (`sim_scenario::counters`); a counter of the definitions the model does
//! not produce is reported unsupported, never given a value.

use std::path::Path;

use rocwasm_counters::{Catalog, CheckError, Definitions, Dimension, Source, Tensor};
use sim_scenario::counters::{self as model, Dim, Launch, Layout};
use sim_scenario::{Device, Scenario, Shape};

use crate::LaunchError;

/// The counter definitions of a run: [`Definitions::discover`] (`--counter-defs
/// FILE`, `$ROCPROFILER_METRICS_PATH`, an installed ROCm's, rocwasm's own);
/// one that cannot be read is a usage error naming the file.
pub fn definitions(explicit: Option<&Path>) -> Result<Definitions, LaunchError> {
    Definitions::discover(explicit).map_err(|e| LaunchError::Usage(anyhow::anyhow!(e)))
}

/// A simulated agent's hardware: the counters the model produces, with
/// their dimensions, and values when a dispatch is given.
pub struct SimHardware {
    arch: String,
    shape: Shape,
    launch: Option<Launch>,
}

impl SimHardware {
    /// `device`'s hardware, for dimensions only (values 0).
    pub fn new(device: &Device) -> SimHardware {
        SimHardware {
            arch: device.arch.clone(),
            shape: device.shape(),
            launch: None,
        }
    }

    /// The counters of one dispatch.
    pub fn with_launch(mut self, launch: Launch) -> SimHardware {
        self.launch = Some(launch);
        self
    }

    fn layout(&self, counter: &str) -> Option<Layout> {
        model::modelled_on(&self.arch)
            .find(|m| m.name == counter)
            .map(|m| m.layout)
    }
}

impl Source for SimHardware {
    fn read(&self, counter: &str, _block: &str) -> Option<Tensor> {
        let layout = self.layout(counter)?;
        let dims: Vec<(Dimension, u32)> = layout
            .dims(&self.shape)
            .into_iter()
            .map(|(d, n)| {
                let d = match d {
                    Dim::Xcc => Dimension::Xcc,
                    Dim::ShaderEngine => Dimension::ShaderEngine,
                    Dim::Instance => Dimension::Instance,
                };
                (d, n)
            })
            .collect();
        let count: u32 = dims.iter().map(|&(_, n)| n).product();
        let values = match &self.launch {
            Some(launch) => model::sample(&self.arch, &self.shape, launch, counter)?
                .into_iter()
                .map(|v| v as f64)
                .collect(),
            None => vec![0.0; count as usize],
        };
        Some(Tensor { dims, values })
    }
}

/// One GPU agent and its counters.
pub struct Agent {
    /// Its index among the GPUs (rocprofv3's `:device=N`, rocprofv3-avail's
    /// `GPU:N`).
    pub index: usize,
    /// Its architecture (`gfx90a`).
    pub arch: String,
    /// Its marketing name.
    pub product: String,
    /// Its counters, from the definitions for its architecture.
    pub catalog: Catalog,
    /// Its hardware.
    pub hardware: SimHardware,
}

impl Agent {
    /// Why `counter` cannot be counted here, if it cannot: the hardware
    /// counter or property the simulated GPU does not model.
    pub fn unsupported(&self, counter: &str) -> Option<String> {
        match self.catalog.evaluate(counter, &self.hardware) {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        }
    }
}

/// The simulated GPU agents (the scenario's devices) with their counters
/// from `defs`.
pub fn agents(defs: &Definitions) -> Result<Vec<Agent>, LaunchError> {
    let scenario = Scenario::from_env().map_err(|e| LaunchError::Usage(anyhow::anyhow!(e)))?;
    let properties: Vec<&str> = model::MODELLED
        .iter()
        .filter(|m| m.layout == Layout::Property)
        .map(|m| m.name)
        .collect();
    Ok(scenario
        .devices
        .iter()
        .enumerate()
        .map(|(index, device)| Agent {
            index,
            arch: device.arch.clone(),
            product: device.name.clone(),
            catalog: defs.catalog(&device.arch, &properties),
            hardware: SimHardware::new(device),
        })
        .collect())
}

/// A requested counter: its name and the GPU it is limited to
/// (`NAME:device=N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    /// The counter.
    pub name: String,
    /// Only on the GPU with this index.
    pub device: Option<usize>,
}

/// Parses `--pmc` values and `pmc:` lines as rocprofv3 does: counters are
/// separated by spaces or commas; `NAME:device=N` limits one to a GPU;
/// duplicates count once.
pub fn parse_pmc(values: &[String]) -> Result<Vec<Requested>, LaunchError> {
    let mut out: Vec<Requested> = Vec::new();
    for value in values {
        for token in value.split(|c: char| c.is_whitespace() || c == ',') {
            if token.is_empty() {
                continue;
            }
            let (name, device) = match token.split_once(':') {
                None => (token, None),
                Some((name, qualifier)) => {
                    let n = qualifier
                        .strip_prefix("device=")
                        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|n| n.parse::<usize>().ok())
                        .ok_or_else(|| {
                            LaunchError::Usage(anyhow::anyhow!(
                                "--pmc {token}: the qualifier after the counter is `:device=N`, N a GPU's index"
                            ))
                        })?;
                    (name, Some(n))
                }
            };
            let r = Requested {
                name: name.to_string(),
                device,
            };
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// Checks a requested set against every agent: each name must be a
/// counter of some agent (else a usage error naming it and the nearest
/// names), a `:device=N` must name a GPU, and on each agent the set must
/// be countable (supported, and within the one-pass register limits).
/// Gives, per agent, the counters it will count.
pub fn check(agents: &[Agent], requested: &[Requested]) -> Result<Vec<Vec<String>>, LaunchError> {
    let usage = |m: String| LaunchError::Usage(anyhow::anyhow!(m));
    for r in requested {
        if let Some(d) = r.device {
            if d >= agents.len() {
                return Err(usage(format!(
                    "counter {}:device={d}: there is no GPU {d} (the GPUs are 0..{})",
                    r.name,
                    agents.len().saturating_sub(1)
                )));
            }
        }
        if !agents.iter().any(|a| a.catalog.get(&r.name).is_some()) {
            let mut near: Vec<&str> = agents
                .iter()
                .flat_map(|a| a.catalog.nearest(&r.name, 3))
                .collect();
            near.sort();
            near.dedup();
            let hint = if near.is_empty() {
                "`rocwasm avail list` lists the counters".to_string()
            } else {
                format!("did you mean {}?", near.join(", "))
            };
            return Err(usage(format!("unknown counter {}: {hint}", r.name)));
        }
    }
    let mut per_agent = Vec::new();
    for agent in agents {
        let names: Vec<&str> = requested
            .iter()
            .filter(|r| r.device.is_none_or(|d| d == agent.index))
            .map(|r| r.name.as_str())
            .filter(|n| agent.catalog.get(n).is_some())
            .collect();
        for &name in &names {
            if let Some(why) = agent.unsupported(name) {
                return Err(usage(format!(
                    "counter {name} cannot be collected on GPU {} ({}, simulated): {why}",
                    agent.index, agent.arch
                )));
            }
        }
        agent.catalog.check_one_pass(&names).map_err(|e| match e {
            CheckError::OverLimit(o) => {
                // The passes they fit in, as an input file (`-i`) has them.
                let split = agent.catalog.passes(&names).map_or_else(
                    |_| String::new(),
                    |passes| {
                        let lines: Vec<String> = passes
                            .iter()
                            .map(|p| format!("pmc: {}", p.join(" ")))
                            .collect();
                        format!(
                            ": {} passes, e.g. an -i file of `{}`",
                            lines.len(),
                            lines.join("` / `")
                        )
                    },
                );
                usage(format!(
                    "the counters cannot be collected in one pass on GPU {} ({}): {o}; \
                     collect them in several runs{split}",
                    agent.index, agent.arch
                ))
            }
            CheckError::Eval(e) => usage(e.to_string()),
        })?;
        per_agent.push(names.into_iter().map(str::to_string).collect());
    }
    Ok(per_agent)
}

/// One pass of an input file: the counters it collects and the
/// subdirectory of the output directory its outputs go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// `--pmc` of the pass, as given (`NAME` or `NAME:device=N`).
    pub pmc: Vec<String>,
    /// `pmc_N` (a text file) or `pass_N` (YAML, JSON), N from 1.
    pub subdirectory: String,
}

/// Reads rocprofv3's input file (`-i`): a text file whose `pmc:` lines are
/// one pass each (`# …` comments and blank lines skipped), or a YAML or
/// JSON file (by extension) whose `jobs:` list has one pass per job (only
/// the `pmc` key is read yet: any other is an error naming it). An error
/// names the file and the line or job.
pub fn read_input(path: &Path) -> Result<Vec<Pass>, LaunchError> {
    let shown = path.display();
    let usage = |m: String| LaunchError::Usage(anyhow::anyhow!(m));
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("cannot read the input file {shown}: {e}")))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let split = |s: &str| -> Vec<String> {
        s.split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut passes = Vec::new();
    if matches!(ext.as_str(), "yaml" | "yml" | "json") {
        let doc: serde_norway::Value =
            serde_norway::from_str(&text).map_err(|e| usage(format!("{shown}: {e}")))?;
        let Some(serde_norway::Value::Sequence(jobs)) = doc.get("jobs") else {
            return Err(usage(format!("{shown}: no `jobs:` list")));
        };
        for (i, job) in jobs.iter().enumerate() {
            let n = i + 1;
            let serde_norway::Value::Mapping(map) = job else {
                return Err(usage(format!("{shown}: job {n} is not a mapping")));
            };
            let mut pmc = Vec::new();
            for (key, value) in map {
                match key.as_str() {
                    Some("pmc") => match value {
                        serde_norway::Value::String(s) => pmc.extend(split(s)),
                        serde_norway::Value::Sequence(items) => {
                            for item in items {
                                let s = item.as_str().ok_or_else(|| {
                                    usage(format!("{shown}: job {n}: `pmc` lists counter names"))
                                })?;
                                pmc.extend(split(s));
                            }
                        }
                        _ => {
                            return Err(usage(format!(
                                "{shown}: job {n}: `pmc` is a list of counter names"
                            )))
                        }
                    },
                    other => {
                        return Err(usage(format!(
                            "{shown}: job {n}: `{}` is not read from input files yet (only `pmc`:                              give the other options on the command line)",
                            other.unwrap_or("?")
                        )))
                    }
                }
            }
            if pmc.is_empty() {
                return Err(usage(format!(
                    "{shown}: job {n} names no counters (`pmc:`)"
                )));
            }
            passes.push(Pass {
                pmc,
                subdirectory: format!("pass_{n}"),
            });
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let Some((_, rest)) = line.split_once("pmc:") else {
                return Err(usage(format!(
                    "{shown}:{}: not a `pmc:` line (each pass is `pmc: NAME NAME …`)",
                    i + 1
                )));
            };
            let pmc = split(rest);
            if pmc.is_empty() {
                return Err(usage(format!(
                    "{shown}:{}: `pmc:` names no counters",
                    i + 1
                )));
            }
            passes.push(Pass {
                pmc,
                subdirectory: format!("pmc_{}", passes.len() + 1),
            });
        }
    }
    if passes.is_empty() {
        return Err(usage(format!("{shown}: no pass (no `pmc:` line or job)")));
    }
    Ok(passes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sum over instances of base counter `name` for `launch`, straight
    /// from the simulator's model.
    fn base(device: &Device, launch: &Launch, name: &str) -> f64 {
        model::sample(&device.arch, &device.shape(), launch, name)
            .unwrap()
            .iter()
            .sum::<u64>() as f64
    }

    #[test]
    fn derived_counters_equal_their_expressions_over_the_base_counters() {
        let scenario = Scenario::default();
        let launch = Launch {
            grid: [1 << 20, 3, 1],
            workgroup: [256, 1, 1],
            duration_ns: scenario.kernel_duration_ns("k", [1 << 20, 3, 1]),
            mix: scenario.kernel_mix("k"),
        };
        for arch in ["gfx90a", "gfx942"] {
            let device = Device {
                arch: arch.into(),
                ..Device::default()
            };
            let agent = SimHardware::new(&device).with_launch(launch);
            let catalog = Definitions::shipped().catalog(arch, &["simd_count", "simd_per_cu"]);
            let eval = |name: &str| catalog.evaluate(name, &agent).unwrap().total();
            let b = |name: &str| base(&device, &launch, name);
            // GRBM counts once per XCC: its max is one XCC's count.
            let xccs = f64::from(device.shape().xccs);
            assert_eq!(
                eval("GPU_UTIL"),
                100.0 * (b("GRBM_GUI_ACTIVE") / xccs) / (b("GRBM_COUNT") / xccs)
            );
            let cu = f64::from(device.compute_units);
            let occupancy = 400.0 * b("SQ_WAVE_CYCLES") / (b("GRBM_GUI_ACTIVE") / xccs) / cu / 32.0;
            assert!((eval("OccupancyPercent") - occupancy).abs() < 1e-9);
            let fetch = if arch == "gfx90a" {
                (b("TCC_EA_RDREQ_32B") * 32.0 + (b("TCC_EA_RDREQ") - b("TCC_EA_RDREQ_32B")) * 64.0)
                    / 1024.0
            } else {
                (b("TCC_BUBBLE") * 128.0
                    + (b("TCC_EA0_RDREQ") - b("TCC_BUBBLE") - b("TCC_EA0_RDREQ_32B")) * 64.0
                    + b("TCC_EA0_RDREQ_32B") * 32.0)
                    / 1024.0
            };
            assert_eq!(eval("FETCH_SIZE"), fetch);
            assert!(fetch > 0.0);
            // Waves are exact: 4 096 workgroups a row, 3 rows, 4 waves each.
            assert_eq!(eval("SQ_WAVES"), 4096.0 * 3.0 * 4.0);
            assert_eq!(eval("CU_NUM"), cu);
        }
    }

    #[test]
    fn input_files_give_one_pass_per_pmc_line_or_job() {
        let dir = tempfile::tempdir().unwrap();
        let txt = dir.path().join("input.txt");
        std::fs::write(
            &txt,
            "# two passes\npmc: SQ_WAVES GRBM_COUNT\n\npmc: TCC_HIT,TCC_MISS # L2\n",
        )
        .unwrap();
        let p = read_input(&txt).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].pmc, ["SQ_WAVES", "GRBM_COUNT"]);
        assert_eq!(p[1].pmc, ["TCC_HIT", "TCC_MISS"]);
        assert_eq!(
            (p[0].subdirectory.as_str(), p[1].subdirectory.as_str()),
            ("pmc_1", "pmc_2")
        );
        let yaml = dir.path().join("input.yaml");
        std::fs::write(
            &yaml,
            "jobs:\n  - pmc: [SQ_WAVES, GRBM_COUNT]\n  - pmc: TCC_HIT\n",
        )
        .unwrap();
        let p = read_input(&yaml).unwrap();
        assert_eq!(p[1].pmc, ["TCC_HIT"]);
        assert_eq!(p[1].subdirectory, "pass_2");
        let json = dir.path().join("input.json");
        std::fs::write(
            &json,
            r#"{"jobs": [{"pmc": ["SQ_WAVES"], "kernel_include_regex": "gemm"}]}"#,
        )
        .unwrap();
        let e = read_input(&json).unwrap_err().to_string();
        assert!(
            e.contains("job 1: `kernel_include_regex` is not read"),
            "{e}"
        );
        std::fs::write(&txt, "pmc: SQ_WAVES\nSQ_BUSY_CYCLES\n").unwrap();
        let e = read_input(&txt).unwrap_err().to_string();
        assert!(
            e.ends_with("input.txt:2: not a `pmc:` line (each pass is `pmc: NAME NAME …`)"),
            "{e}"
        );
    }

    #[test]
    fn pmc_values_split_as_rocprofv3_splits_them() {
        let r = parse_pmc(&[
            "SQ_WAVES,GRBM_COUNT  SQ_WAVES".into(),
            "TCC_HIT:device=1".into(),
        ])
        .unwrap();
        let names: Vec<(&str, Option<usize>)> =
            r.iter().map(|r| (r.name.as_str(), r.device)).collect();
        assert_eq!(
            names,
            [
                ("SQ_WAVES", None),
                ("GRBM_COUNT", None),
                ("TCC_HIT", Some(1))
            ]
        );
        assert!(parse_pmc(&["A:device=x".into()]).is_err());
        assert!(parse_pmc(&["A:device=".into()]).is_err());
    }
}

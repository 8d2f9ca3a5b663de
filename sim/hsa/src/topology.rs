//! The machine the scenario describes: one CPU agent, then one GPU agent per
//! scenario device, each with its memory pools. Plain data, built once by
//! `runtime`; the HSA query functions over it are in `agent`.
//!
//! Handles are small synthetic numbers (`0x10000` for the CPU, `0x10000 +
//! 0x100 * n` for GPU `n`, pools at `agent + 1 + i`): opaque to callers,
//! stable across runs, and easy to recognise in a trace.

use sim_scenario::{Device, Scenario};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolKind {
    /// Device memory (coarse grained) of a GPU.
    DeviceCoarse,
    /// System memory (fine grained), owned by the CPU agent.
    SystemFine,
    /// System memory usable for kernel arguments, owned by the CPU agent.
    Kernarg,
}

#[derive(Debug)]
pub struct Pool {
    pub handle: u64,
    pub kind: PoolKind,
    pub size: u64,
}

#[derive(Debug)]
pub struct Agent {
    pub handle: u64,
    /// HSA node id: 0 for the CPU, 1.. for GPUs.
    pub node: u32,
    /// `None` for the CPU.
    pub device: Option<Device>,
    pub pools: Vec<Pool>,
}

impl Agent {
    pub fn is_gpu(&self) -> bool {
        self.device.is_some()
    }

    /// The ISA handle of a GPU agent (CPUs have none).
    pub fn isa(&self) -> Option<u64> {
        self.is_gpu().then_some(self.handle + 0x80)
    }

    pub fn isa_name(&self) -> Option<String> {
        self.device
            .as_ref()
            .map(|d| format!("amdgcn-amd-amdhsa--{}", d.arch))
    }
}

const HOST_MEMORY: u64 = 64 << 30;

pub fn build(scenario: &Scenario) -> Vec<Agent> {
    let cpu_handle = 0x10000;
    let mut agents = vec![Agent {
        handle: cpu_handle,
        node: 0,
        device: None,
        pools: vec![
            Pool {
                handle: cpu_handle + 1,
                kind: PoolKind::SystemFine,
                size: HOST_MEMORY,
            },
            Pool {
                handle: cpu_handle + 2,
                kind: PoolKind::Kernarg,
                size: HOST_MEMORY,
            },
        ],
    }];
    for (i, device) in scenario.devices.iter().enumerate() {
        let handle = cpu_handle + 0x100 * (i as u64 + 1);
        agents.push(Agent {
            handle,
            node: i as u32 + 1,
            device: Some(device.clone()),
            pools: vec![Pool {
                handle: handle + 1,
                kind: PoolKind::DeviceCoarse,
                size: device.memory_bytes,
            }],
        });
    }
    agents
}

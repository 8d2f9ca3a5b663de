//! Which library measures a live run (`[settings] backend`, `rocwasm run
//! --backend`).

use serde::{Deserialize, Serialize};

/// Who intercepts the application's runtimes and measures its calls,
/// dispatches and copies. The chain, the policy checks and the outputs are
/// the same whichever does; what differs is listed in `docs/BACKENDS.md`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// rocwasm's own interception (the tool library preloaded into the
    /// application).
    #[default]
    Builtin,
    /// A rocprofiler-sdk library — AMD's where one is installed, else
    /// rocwasm's own tool library, which implements its C API — with
    /// rocwasm's chain and outputs as its tool.
    RocprofilerSdk,
    /// The SDK when AMD's library is installed and the application's HIP
    /// runtime registers with it (links `librocprofiler-register`), else
    /// built-in.
    Auto,
}

impl Backend {
    /// Every back end, as the chain file and the flag spell it.
    pub const ALL: &'static [Backend] = &[Backend::Builtin, Backend::RocprofilerSdk, Backend::Auto];

    /// `builtin`, `rocprofiler-sdk`, `auto`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Builtin => "builtin",
            Backend::RocprofilerSdk => "rocprofiler-sdk",
            Backend::Auto => "auto",
        }
    }

    /// Looks a back end up by its spelling.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|b| b.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_ends_read_back_their_names_and_nothing_else() {
        for &b in Backend::ALL {
            assert_eq!(Backend::from_name(b.name()), Some(b));
        }
        assert_eq!(Backend::from_name("sdk"), None);
    }
}

//! A tool the build needs is not on this machine.
//!
//! Every recipe reports an absent compiler, linker, library or interpreter
//! with this one error type, so its message always has the same shape — the
//! tool, why it is needed, and the exact command that installs it — and so
//! the CLI can tell it from a failed build (status 2, not 1) by
//! downcasting.

use std::fmt;

/// `tool` is missing; `install` is the command that provides it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingTool {
    /// The program or file that was looked for (`clang-14`, `python3 -m pip`).
    pub tool: String,
    /// What it is needed for (`building C plugins`).
    pub needed_for: String,
    /// The command that installs it, to copy and paste.
    pub install: String,
}

impl MissingTool {
    /// A missing `tool`, needed for `needed_for`, installed by `install`.
    pub fn new(
        tool: impl Into<String>,
        needed_for: impl Into<String>,
        install: impl Into<String>,
    ) -> MissingTool {
        MissingTool {
            tool: tool.into(),
            needed_for: needed_for.into(),
            install: install.into(),
        }
    }

    /// The `MissingTool` inside `error`'s chain, if there is one.
    pub fn find(error: &anyhow::Error) -> Option<&MissingTool> {
        error.chain().find_map(|e| e.downcast_ref::<MissingTool>())
    }
}

impl fmt::Display for MissingTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs `{}`, which is not available on this machine; install it with: {}",
            self.needed_for, self.tool, self.install
        )
    }
}

impl std::error::Error for MissingTool {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_tool_and_the_command() {
        let m = MissingTool::new("clang-14", "building C plugins", "apt-get install clang-14");
        assert_eq!(
            m.to_string(),
            "building C plugins needs `clang-14`, which is not available on this machine; \
             install it with: apt-get install clang-14"
        );
        let e = anyhow::Error::new(m.clone()).context("building demo");
        assert_eq!(MissingTool::find(&e), Some(&m));
    }
}

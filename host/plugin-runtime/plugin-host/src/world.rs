//! Which world a component implements, read from its type before anything
//! is linked or instantiated, so a wrong file fails with a precise message.

use wasmtime::component::Component;
use wasmtime::Engine;

use crate::bindings::names;

/// The two plugin worlds (defined once in `rocwasm-plan`).
pub use rocwasm_plan::World;

/// The version of the `rocwasm:plugin` package a component was built
/// against, read from its life-cycle export. The host loads every version
/// it lists; see `crate::legacy` for what an older one changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitVersion {
    /// `rocwasm:plugin@0.3.2`, the current package (`wit/`): 0.3.1 and
    /// `symbols.counter-names`.
    V0_3_2,
    /// `rocwasm:plugin@0.3.1` (`wit/legacy/0.3.1/`): 0.3.0 and the `run`
    /// interface (`crate::host::RunHost`), the optional `merge` export.
    V0_3_1,
    /// `rocwasm:plugin@0.3.0` (`wit/legacy/0.3.0/`): batches as one packed
    /// column buffer, transforms that return edits (`crate::packed_world`).
    V0_3_0,
    /// `rocwasm:plugin@0.2.0` (`wit/legacy/0.2.0/`): batches as 64 column
    /// lists; the host's typed bindings.
    V0_2_0,
    /// `rocwasm:plugin@0.1.0` (`wit/legacy/0.1.0/`).
    V0_1_0,
}

impl WitVersion {
    /// The package `wit/` holds, which new plugins are built against.
    pub const CURRENT: WitVersion = WitVersion::V0_3_2;
}

impl WitVersion {
    /// The version `surface` exports its life cycle under; the current one
    /// when it exports none (the world check then names what is missing).
    pub fn of(surface: &Surface) -> WitVersion {
        let exports = |name: &str| surface.exports.iter().any(|e| e == name);
        if exports(names::LIFECYCLE) {
            WitVersion::V0_3_2
        } else if exports(names::v0_3_1::LIFECYCLE) {
            WitVersion::V0_3_1
        } else if exports(names::v0_3_0::LIFECYCLE) {
            WitVersion::V0_3_0
        } else if exports(names::v0_2_0::LIFECYCLE) {
            WitVersion::V0_2_0
        } else if exports(names::v0_1_0::LIFECYCLE) {
            WitVersion::V0_1_0
        } else {
            WitVersion::CURRENT
        }
    }

    /// True for 0.3.x: batches as one packed buffer, transforms that
    /// select columns and answer edits (`crate::packed_world`).
    pub fn is_packed(self) -> bool {
        matches!(
            self,
            WitVersion::V0_3_2 | WitVersion::V0_3_1 | WitVersion::V0_3_0
        )
    }

    /// True from 0.3.1 on: `run` imported, `merge` exported.
    pub fn has_run(self) -> bool {
        matches!(self, WitVersion::V0_3_2 | WitVersion::V0_3_1)
    }

    /// The `run` and `merge` interface names of this version (0.3.1 on).
    pub fn run_and_merge(self) -> Option<(&'static str, &'static str)> {
        match self {
            WitVersion::V0_3_2 => Some((names::RUN, names::MERGE)),
            WitVersion::V0_3_1 => Some((names::v0_3_1::RUN, names::v0_3_1::MERGE)),
            _ => None,
        }
    }

    /// The package version, as WIT writes it (`0.3.2`).
    pub fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_3_2 => names::VERSION,
            WitVersion::V0_3_1 => names::v0_3_1::VERSION,
            WitVersion::V0_3_0 => names::v0_3_0::VERSION,
            WitVersion::V0_2_0 => names::v0_2_0::VERSION,
            WitVersion::V0_1_0 => names::v0_1_0::VERSION,
        }
    }

    /// The interfaces a component of `world` built against this version
    /// must export.
    pub fn required_exports(self, world: World) -> [&'static str; 2] {
        use names::{v0_1_0 as old, v0_2_0 as typed, v0_3_0 as packed, v0_3_1 as run};
        match (self, world) {
            (WitVersion::V0_3_2, World::Analysis) => [names::LIFECYCLE, names::ANALYSIS],
            (WitVersion::V0_3_2, World::Transform) => [names::LIFECYCLE, names::TRANSFORM],
            (WitVersion::V0_3_1, World::Analysis) => [run::LIFECYCLE, run::ANALYSIS],
            (WitVersion::V0_3_1, World::Transform) => [run::LIFECYCLE, run::TRANSFORM],
            (WitVersion::V0_3_0, World::Analysis) => [packed::LIFECYCLE, packed::ANALYSIS],
            (WitVersion::V0_3_0, World::Transform) => [packed::LIFECYCLE, packed::TRANSFORM],
            (WitVersion::V0_2_0, World::Analysis) => [typed::LIFECYCLE, typed::ANALYSIS],
            (WitVersion::V0_2_0, World::Transform) => [typed::LIFECYCLE, typed::TRANSFORM],
            (WitVersion::V0_1_0, World::Analysis) => [old::LIFECYCLE, old::ANALYSIS],
            (WitVersion::V0_1_0, World::Transform) => [old::LIFECYCLE, old::TRANSFORM],
        }
    }

    /// True when a `world` component of this version may import `name`
    /// (WASI is handled separately).
    fn may_import(self, world: World, name: &str) -> bool {
        use names::{v0_1_0 as old, v0_2_0 as typed, v0_3_0 as packed, v0_3_1 as run};
        if self.run_and_merge().is_some_and(|(r, _)| r == name) {
            return true;
        }
        let (common, profiler, delivery) = match self {
            WitVersion::V0_3_2 => (names::COMMON_IMPORTS, names::PROFILER, names::DELIVERY),
            WitVersion::V0_3_1 => (run::COMMON_IMPORTS, run::PROFILER, run::DELIVERY),
            WitVersion::V0_3_0 => (packed::COMMON_IMPORTS, packed::PROFILER, packed::DELIVERY),
            WitVersion::V0_2_0 => (typed::COMMON_IMPORTS, typed::PROFILER, typed::DELIVERY),
            WitVersion::V0_1_0 => (old::COMMON_IMPORTS, old::PROFILER, old::DELIVERY),
        };
        // From 0.3.0 on a transform chooses its columns too.
        let transform_selects = self.is_packed() && name == delivery;
        common.contains(&name)
            || (world == World::Analysis && (name == profiler || name == delivery))
            || (world == World::Transform && transform_selects)
    }
}

/// True when `surface` is a 0.3.1-or-later analysis that exports `merge`
/// (world `mergeable-analysis-plugin`): its results merge across instances.
pub fn exports_merge(surface: &Surface) -> bool {
    let version = WitVersion::of(surface);
    let exports = |name: &str| surface.exports.iter().any(|e| e == name);
    version
        .run_and_merge()
        .is_some_and(|(_, merge)| exports(merge))
        && exports(version.required_exports(World::Analysis)[1])
}

/// The interfaces a component of `world` must export (current package).
pub fn required_exports(world: World) -> [&'static str; 2] {
    WitVersion::CURRENT.required_exports(world)
}

/// A component's interface surface, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surface {
    /// The full names of the interfaces it imports (`rocwasm:plugin/log@0.1.0`,
    /// `wasi:cli/stdout@0.2.0` …).
    pub imports: Vec<String>,
    /// The full names of the interfaces it exports.
    pub exports: Vec<String>,
}

impl Surface {
    /// Reads `component`'s imports and exports from its type (nothing is
    /// linked or run).
    pub fn of(engine: &Engine, component: &Component) -> Surface {
        let ty = component.component_type();
        Surface {
            imports: ty.imports(engine).map(|(n, _)| n.to_string()).collect(),
            exports: ty.exports(engine).map(|(n, _)| n.to_string()).collect(),
        }
    }

    /// True when the component imports any WASI interface (componentize-py
    /// and componentize-js guests do); it then gets a deny-all WASI context.
    pub fn imports_wasi(&self) -> bool {
        self.imports.iter().any(|i| i.starts_with("wasi:"))
    }
}

/// Why a component is not a plugin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorldError {
    /// It lacks the exports of both worlds.
    #[error(
        "the component implements neither plugin world: for `analysis-plugin` it lacks the \
         export(s) {missing_analysis:?}, for `transform-plugin` {missing_transform:?} \
         (it exports {exports:?})"
    )]
    NoWorld {
        /// The exports an analysis needs that the component lacks.
        missing_analysis: Vec<String>,
        /// The exports a transform needs that the component lacks.
        missing_transform: Vec<String>,
        /// What it does export.
        exports: Vec<String>,
    },
    /// It exports both worlds' interfaces.
    #[error("the component exports both `analysis` and `transform`; a plugin is one or the other")]
    Ambiguous,
    /// It is the other world than the one asked for.
    #[error(
        "the component implements `{found}`, but the stage's `kind` is `{}`",
        .expected.name()
    )]
    Unexpected {
        /// The world asked for.
        expected: World,
        /// The world the component implements.
        found: World,
    },
    /// It imports interfaces its world does not provide (a transform
    /// importing `profiler` or `delivery`, or another package's interface).
    #[error("a {world} may not import {imports:?} (the host provides only the world's interfaces and WASI)")]
    ForeignImports {
        /// The world it implements.
        world: World,
        /// The imports the host does not provide.
        imports: Vec<String>,
    },
}

/// Detects the world from the exports, then checks the imports against it
/// (both in the package version the component was built against).
pub fn detect(surface: &Surface) -> Result<World, WorldError> {
    let version = WitVersion::of(surface);
    let missing = |w: World| -> Vec<String> {
        version
            .required_exports(w)
            .iter()
            .filter(|e| !surface.exports.iter().any(|x| x == *e))
            .map(|e| e.to_string())
            .collect()
    };
    let (ma, mt) = (missing(World::Analysis), missing(World::Transform));
    let world = match (ma.is_empty(), mt.is_empty()) {
        (true, false) => World::Analysis,
        (false, true) => World::Transform,
        (true, true) => return Err(WorldError::Ambiguous),
        (false, false) => {
            return Err(WorldError::NoWorld {
                missing_analysis: ma,
                missing_transform: mt,
                exports: surface.exports.clone(),
            })
        }
    };
    let foreign: Vec<String> = surface
        .imports
        .iter()
        .filter(|i| !i.starts_with("wasi:") && !version.may_import(world, i))
        .cloned()
        .collect();
    if !foreign.is_empty() {
        return Err(WorldError::ForeignImports {
            world,
            imports: foreign,
        });
    }
    Ok(world)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface(imports: &[&str], exports: &[&str]) -> Surface {
        Surface {
            imports: imports.iter().map(|s| s.to_string()).collect(),
            exports: exports.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn detects_each_world_and_names_missing_exports() {
        let a = surface(
            &[names::PROFILER, "wasi:cli/stdout@0.2.0"],
            &[names::LIFECYCLE, names::ANALYSIS],
        );
        assert_eq!(detect(&a), Ok(World::Analysis));
        assert!(a.imports_wasi());
        let t = surface(
            &["rocwasm:plugin/log@0.3.2", names::RUN],
            &[names::LIFECYCLE, names::TRANSFORM],
        );
        assert_eq!(detect(&t), Ok(World::Transform));
        let none = surface(&[], &[names::LIFECYCLE]);
        let err = detect(&none).unwrap_err().to_string();
        assert!(
            err.contains(names::ANALYSIS) && err.contains(names::TRANSFORM),
            "{err}"
        );
    }

    #[test]
    fn transform_may_not_import_profiler() {
        let t = surface(&[names::PROFILER], &[names::LIFECYCLE, names::TRANSFORM]);
        assert!(matches!(detect(&t), Err(WorldError::ForeignImports { .. })));
    }

    #[test]
    fn a_component_of_the_earlier_package_is_detected_in_its_own_names() {
        use names::v0_1_0 as old;
        let a = surface(
            &[old::PROFILER, "rocwasm:plugin/log@0.1.0"],
            &[old::LIFECYCLE, old::ANALYSIS],
        );
        assert_eq!(WitVersion::of(&a), WitVersion::V0_1_0);
        assert_eq!(detect(&a), Ok(World::Analysis));
        // Mixing the versions is another package's interface.
        let mixed = surface(&[names::PROFILER], &[old::LIFECYCLE, old::ANALYSIS]);
        assert!(matches!(
            detect(&mixed),
            Err(WorldError::ForeignImports { .. })
        ));
        let current = surface(&[], &[names::LIFECYCLE, names::ANALYSIS]);
        assert_eq!(WitVersion::of(&current).as_str(), "0.3.2");
        // A 0.3.1 component: its `run`, not 0.3.2's.
        use names::v0_3_1 as run;
        let last = surface(&[run::RUN, run::DELIVERY], &[run::LIFECYCLE, run::ANALYSIS]);
        assert_eq!(WitVersion::of(&last), WitVersion::V0_3_1);
        assert_eq!(detect(&last), Ok(World::Analysis));
        let mixed = surface(&[names::RUN], &[run::LIFECYCLE, run::ANALYSIS]);
        assert!(matches!(
            detect(&mixed),
            Err(WorldError::ForeignImports { .. })
        ));
        use names::v0_3_0 as packed;
        let first_packed = surface(&[packed::DELIVERY], &[packed::LIFECYCLE, packed::ANALYSIS]);
        assert_eq!(WitVersion::of(&first_packed), WitVersion::V0_3_0);
        assert_eq!(detect(&first_packed), Ok(World::Analysis));
        // `run` is 0.3.1's: a 0.3.0 component cannot import it.
        let too_new = surface(&[names::RUN], &[packed::LIFECYCLE, packed::ANALYSIS]);
        assert!(matches!(
            detect(&too_new),
            Err(WorldError::ForeignImports { .. })
        ));
        use names::v0_2_0 as typed;
        let previous = surface(&[typed::PROFILER], &[typed::LIFECYCLE, typed::ANALYSIS]);
        assert_eq!(WitVersion::of(&previous), WitVersion::V0_2_0);
        assert_eq!(detect(&previous), Ok(World::Analysis));
    }
}

//! Shipping plugins to the nodes of a cluster.
//!
//! An admin vets a plugin (`rocwasm plugin vet`), signs it (`rocwasm plugin
//! sign`) and **pushes** it, as an OCI artifact, to a registry or to a
//! directory on the shared filesystem; users' chains then name it:
//!
//! ```toml
//! [[stage]]
//! name = "stats"
//! plugin = "oci://registry.site:5000/rocwasm/kernel-stats:1.2"
//! sha256 = "9f2c…"          # optional: the vetted component, pinned
//! ```
//!
//! and every run **pulls** it into the node's cache, checked by digest,
//! before the site policy admits it like any local file (signature, digest
//! allow-list, caps). Data flow: [`reference`] parses where a plugin lives,
//! [`artifact`] is the OCI form of a component, [`store`] pushes/resolves/
//! fetches through [`oci`] (a registry) or [`layout`] (a directory), and
//! [`cache`] turns a reference into a verified local file.

#![forbid(unsafe_code)]

pub mod artifact;
pub mod cache;
mod fetcher;
pub mod layout;
pub mod oci;
pub mod reference;
pub mod store;

pub use artifact::{Artifact, Pushed, Resolved};
pub use cache::{PullCache, Pulled};
pub use fetcher::fetcher;
pub use reference::{is_location, Location, Target};
pub use store::Store;

/// Why a push or pull failed; each reads as a sentence naming the
/// reference.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The reference text is malformed.
    #[error("`{reference}` is not a plugin reference: {why}")]
    Reference {
        /// As written.
        reference: String,
        /// What is wrong.
        why: String,
    },
    /// The bytes are not a Wasm component.
    #[error(
        "{what} is not a Wasm component (a core module or another file); build it as a component"
    )]
    NotAComponent {
        /// The file.
        what: String,
    },
    /// The store answered with an error or with something unusable.
    #[error("{location}: {doing} failed: {why}")]
    Registry {
        /// The reference.
        location: String,
        /// What was being done.
        doing: String,
        /// The store's answer.
        why: String,
    },
    /// The store could not be asked at all: no connection, a timeout, a
    /// directory store that is not there (an unmounted filesystem). Only
    /// this lets a pinned, cached component run without its store.
    #[error("{location}: the store cannot be reached: {why}")]
    Unreachable {
        /// The reference.
        location: String,
        /// Why.
        why: String,
    },
    /// The reference names another component than the chain pins.
    #[error("{location} now names component {found}, not the pinned {pinned}: the tag was moved to a component that was not vetted for this pin (pin the new digest after vetting it, or name the old manifest with @sha256:…)")]
    PinMismatch {
        /// The reference.
        location: String,
        /// The pinned digest (a chain's `sha256`, `pull --sha256`).
        pinned: String,
        /// What the store has now.
        found: String,
    },
    /// A local file could not be read or written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

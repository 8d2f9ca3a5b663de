//! [`Store`]: a registry repository or a directory store, behind the three
//! verbs both have: push an artifact, resolve a reference to digests,
//! fetch a component by digest.

use crate::artifact::{Artifact, Pushed, Resolved};
use crate::layout::LayoutRepo;
use crate::oci::RemoteRepo;
use crate::reference::Location;
use crate::RegistryError;

/// A repository to push to or pull from.
pub enum Store {
    /// A registry.
    Remote(Box<RemoteRepo>),
    /// A directory store.
    Layout(LayoutRepo),
}

impl Store {
    /// Opens the store `location` names; `plain_http` lets a non-loopback
    /// registry be spoken to without TLS.
    pub fn open(location: &Location, plain_http: bool) -> Result<Store, RegistryError> {
        Ok(match location {
            Location::Oci(r) => Store::Remote(Box::new(RemoteRepo::connect(r, plain_http)?)),
            Location::Dir(r) => Store::Layout(LayoutRepo::new(r.clone())),
        })
    }

    /// Stores `artifact` under the location's tag.
    pub fn push(&self, artifact: &Artifact) -> Result<Pushed, RegistryError> {
        match self {
            Store::Remote(r) => r.push(artifact),
            Store::Layout(l) => l.push(artifact),
        }
    }

    /// The digests the location's tag or digest names now.
    pub fn resolve(&self) -> Result<Resolved, RegistryError> {
        match self {
            Store::Remote(r) => r.resolve(),
            Store::Layout(l) => l.resolve(),
        }
    }

    /// The component `resolved` names, its digest checked.
    pub fn fetch(&self, resolved: &Resolved) -> Result<Vec<u8>, RegistryError> {
        match self {
            Store::Remote(r) => r.fetch(resolved),
            Store::Layout(l) => l.fetch(resolved),
        }
    }
}

//! A repository in an OCI distribution registry, through `oci-client`.
//!
//! `oci-client` is async; each [`RemoteRepo`] drives it on a current-thread
//! tokio runtime of its own, so callers (the CLI, chain loading) stay
//! synchronous. TLS is rustls with the *ring* provider, installed once per
//! process. Credentials: anonymous unless `ROCWASM_REGISTRY_USERNAME` and
//! `ROCWASM_REGISTRY_PASSWORD` are set (HTTP basic, what `docker-registry`'s
//! htpasswd mode and most site registries accept).

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use crate::artifact::{
    check_blob, Artifact, Pushed, Resolved, CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE,
};
use crate::reference::{OciRef, Target};
use crate::RegistryError;

/// The environment variables with registry credentials.
pub const USERNAME_VAR: &str = "ROCWASM_REGISTRY_USERNAME";
/// See [`USERNAME_VAR`].
pub const PASSWORD_VAR: &str = "ROCWASM_REGISTRY_PASSWORD";

/// One repository of one registry, connected.
pub struct RemoteRepo {
    at: OciRef,
    client: Client,
    auth: RegistryAuth,
    runtime: tokio::runtime::Runtime,
}

impl RemoteRepo {
    /// A client for `at`: plain HTTP for a loopback registry or when
    /// `plain_http` (the `--plain-http` flag), HTTPS otherwise.
    pub fn connect(at: &OciRef, plain_http: bool) -> Result<RemoteRepo, RegistryError> {
        // Several clients may race here; only the first install wins and
        // the others' `Err` (already installed) is the state we want.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let protocol = if plain_http || at.is_loopback() {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        };
        let client = Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(120)),
            ..ClientConfig::default()
        });
        let auth = match (std::env::var(USERNAME_VAR), std::env::var(PASSWORD_VAR)) {
            (Ok(u), Ok(p)) => RegistryAuth::Basic(u, p),
            _ => RegistryAuth::Anonymous,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RegistryError::Io {
                what: "starting the registry client's runtime".into(),
                source: e,
            })?;
        Ok(RemoteRepo {
            at: at.clone(),
            client,
            auth,
            runtime,
        })
    }

    fn reference(&self, target: &Target) -> Reference {
        let (registry, repo) = (self.at.registry.clone(), self.at.repository.clone());
        match target {
            Target::Tag(t) => Reference::with_tag(registry, repo, t.clone()),
            Target::Digest(d) => Reference::with_digest(registry, repo, d.clone()),
        }
    }

    fn failed(&self, doing: &str, e: impl std::fmt::Display) -> RegistryError {
        RegistryError::Registry {
            location: format!(
                "oci://{}/{}{}",
                self.at.registry, self.at.repository, self.at.target
            ),
            doing: doing.to_string(),
            why: e.to_string(),
        }
    }

    /// Pushes `artifact` under this reference's tag.
    pub fn push(&self, artifact: &Artifact) -> Result<Pushed, RegistryError> {
        let reference = self.reference(&self.at.target);
        let layers = [ImageLayer::new(
            artifact.component.clone(),
            crate::artifact::WASM_LAYER_MEDIA_TYPE.to_string(),
            None,
        )];
        let config = Config::new(artifact.config.clone(), CONFIG_MEDIA_TYPE.to_string(), None);
        let mut manifest =
            OciImageManifest::build(&layers, &config, Some(artifact.annotations.clone()));
        manifest.media_type = Some(MANIFEST_MEDIA_TYPE.to_string());
        self.runtime
            .block_on(
                self.client
                    .push(&reference, &layers, config, &self.auth, Some(manifest)),
            )
            .map_err(|e| self.failed("pushing", e))?;
        let manifest_digest = self
            .runtime
            .block_on(self.client.fetch_manifest_digest(&reference, &self.auth))
            .map_err(|e| self.failed("reading back the pushed manifest's digest", e))?;
        Ok(Pushed {
            manifest_digest,
            component_digest: artifact.component_digest.clone(),
        })
    }

    /// Reads the manifest the reference names: its digest and component
    /// layer. Downloads no component.
    pub fn resolve(&self) -> Result<Resolved, RegistryError> {
        let reference = self.reference(&self.at.target);
        let (manifest, digest) = self
            .runtime
            .block_on(self.client.pull_image_manifest(&reference, &self.auth))
            .map_err(|e| self.failed("reading the manifest", e))?;
        if let Target::Digest(want) = &self.at.target {
            if &digest != want {
                return Err(self.failed(
                    "reading the manifest",
                    format!("the registry answered with manifest {digest}"),
                ));
            }
        }
        Resolved::from_layers(digest, &manifest.layers)
            .map_err(|why| self.failed("reading the manifest", why))
    }

    /// Downloads the component blob `resolved` names and checks its digest.
    pub fn fetch(&self, resolved: &Resolved) -> Result<Vec<u8>, RegistryError> {
        resolved
            .check_size()
            .map_err(|why| self.failed("downloading the component", why))?;
        let reference = self.reference(&Target::Digest(resolved.manifest_digest.clone()));
        let layer = OciDescriptor {
            media_type: crate::artifact::WASM_LAYER_MEDIA_TYPE.to_string(),
            digest: resolved.component_digest.clone(),
            size: resolved.component_size as i64,
            ..OciDescriptor::default()
        };
        let mut bytes = Vec::new();
        self.runtime
            .block_on(self.client.pull_blob(&reference, &layer, &mut bytes))
            .map_err(|e| self.failed("downloading the component", e))?;
        check_blob(&bytes, &resolved.component_digest)
            .map_err(|why| self.failed("downloading the component", why))?;
        Ok(bytes)
    }
}

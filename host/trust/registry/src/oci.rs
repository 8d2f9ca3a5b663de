//! A repository in an OCI distribution registry, through `oci-client`.
//!
//! `oci-client` is async; each [`RemoteRepo`] drives it on a current-thread
//! tokio runtime of its own, so callers (the CLI, chain loading) stay
//! synchronous. TLS is rustls with the *ring* provider, installed once per
//! process. Credentials: anonymous unless `ROCWASM_REGISTRY_HOST` names
//! this registry (`host[:port]`, exactly) and `ROCWASM_REGISTRY_USERNAME`
//! and `ROCWASM_REGISTRY_PASSWORD` are set (HTTP basic, what
//! `docker-registry`'s htpasswd mode and most site registries accept): a
//! chain file naming some other registry never receives them.
//!
//! Downloads are capped at the size the manifest declares (and at
//! [`crate::artifact::MAX_COMPONENT_BYTES`]): a registry streaming more is
//! cut off, not buffered.

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
/// The one registry (`host[:port]`) the credentials are for.
pub const HOST_VAR: &str = "ROCWASM_REGISTRY_HOST";

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
        let for_this = std::env::var(HOST_VAR).is_ok_and(|h| h == at.registry);
        let auth = match (
            for_this,
            std::env::var(USERNAME_VAR),
            std::env::var(PASSWORD_VAR),
        ) {
            (true, Ok(u), Ok(p)) => RegistryAuth::Basic(u, p),
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

    /// A client error: [`RegistryError::Unreachable`] when no answer came
    /// (connection refused, timeout), else what the registry said.
    fn client_failed(
        &self,
        doing: &str,
        e: oci_client::errors::OciDistributionError,
    ) -> RegistryError {
        if let oci_client::errors::OciDistributionError::RequestError(r) = &e {
            if r.is_connect() || r.is_timeout() {
                return RegistryError::Unreachable {
                    location: self.location(),
                    why: format!("{doing}: {e}"),
                };
            }
        }
        self.failed(doing, e)
    }

    fn location(&self) -> String {
        format!(
            "oci://{}/{}{}",
            self.at.registry, self.at.repository, self.at.target
        )
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
            .map_err(|e| self.client_failed("reading the manifest", e))?;
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
        let mut capped = Capped {
            bytes: Vec::new(),
            limit: resolved.component_size,
        };
        self.runtime
            .block_on(self.client.pull_blob(&reference, &layer, &mut capped))
            .map_err(|e| self.client_failed("downloading the component", e))?;
        let bytes = capped.bytes;
        check_blob(&bytes, &resolved.component_digest)
            .map_err(|why| self.failed("downloading the component", why))?;
        Ok(bytes)
    }
}

/// A download buffer that refuses bytes past `limit` (the size the
/// manifest declared): a registry cannot make us hold more.
struct Capped {
    bytes: Vec<u8>,
    limit: u64,
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.bytes.len() as u64 + buf.len() as u64 > self.limit {
            let limit = self.limit;
            return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                "the registry sent more than the {limit} bytes the manifest declares"
            ))));
        }
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

//! Where a plugin is shipped: a [`Location`] parsed from the text a user
//! writes after `plugin =` in a chain or on `rocwasm plugin push/pull`.
//!
//! Two stores, one artifact format:
//!
//! - `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`: an OCI distribution
//!   registry (Docker's `registry`, Harbor, Zot, GHCR…). Loopback hosts
//!   (`localhost`, `127.x.x.x`, `[::1]`) are spoken to over plain HTTP, as
//!   Docker does; every other host over HTTPS.
//! - `dir:///ABSOLUTE/PATH[:TAG][@sha256:HEX]`: an OCI *image layout*
//!   directory (the OCI image-layout specification: `oci-layout`,
//!   `index.json`, `blobs/sha256/…`), for example on the cluster's shared
//!   filesystem. `oras` and `skopeo` read and write the same layout.
//!
//! The tag defaults to `latest`. A `@sha256:` digest names a manifest and
//! wins over the tag (the tag is then only informational), as in Docker.

use std::fmt;
use std::path::PathBuf;

use crate::RegistryError;

/// What a reference points at inside its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A tag, which may move.
    Tag(String),
    /// A manifest digest (`sha256:` + 64 lowercase hex digits), which may not.
    Digest(String),
}

/// A repository in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRef {
    /// `host[:port]`.
    pub registry: String,
    /// `team/kernel-stats`.
    pub repository: String,
    /// The tag or manifest digest.
    pub target: Target,
}

/// A repository that is an OCI image-layout directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirRef {
    /// The layout directory (absolute).
    pub layout: PathBuf,
    /// The tag (`org.opencontainers.image.ref.name`) or manifest digest.
    pub target: Target,
}

/// A parsed `oci://` or `dir://` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A registry.
    Oci(OciRef),
    /// A directory store.
    Dir(DirRef),
}

/// The schemes a [`Location`] starts with (the chain format's, defined
/// once where chains are parsed).
pub use rocwasm_config::resolve::SHIPPED_SCHEMES as SCHEMES;

/// True when `spec` names a shipped plugin rather than a path or stock name.
pub fn is_location(spec: &str) -> bool {
    SCHEMES.iter().any(|s| spec.starts_with(s))
}

impl Location {
    /// Parses a reference; the error says which part is wrong and why.
    pub fn parse(spec: &str) -> Result<Location, RegistryError> {
        let bad = |why: String| RegistryError::Reference {
            reference: spec.to_string(),
            why,
        };
        if let Some(rest) = spec.strip_prefix("oci://") {
            let (registry, path) = rest.split_once('/').ok_or_else(|| {
                bad("expected oci://HOST[:PORT]/REPOSITORY[:TAG]; there is no repository after the host".into())
            })?;
            check_host(registry).map_err(bad)?;
            let (repository, target) = split_target(path).map_err(bad)?;
            check_repository(repository).map_err(bad)?;
            Ok(Location::Oci(OciRef {
                registry: registry.to_string(),
                repository: repository.to_string(),
                target,
            }))
        } else if let Some(rest) = spec.strip_prefix("dir://") {
            if !rest.starts_with('/') {
                return Err(bad(
                    "a directory store needs an absolute path: dir:///PATH[:TAG]".into(),
                ));
            }
            let (path, target) = split_target(rest).map_err(bad)?;
            let path = path.trim_end_matches('/');
            if path.is_empty() {
                return Err(bad("the directory is empty".into()));
            }
            Ok(Location::Dir(DirRef {
                layout: PathBuf::from(path),
                target,
            }))
        } else {
            Err(bad(format!(
                "a shipped plugin starts with {}",
                SCHEMES.join(" or ")
            )))
        }
    }

    /// The tag or digest.
    pub fn target(&self) -> &Target {
        match self {
            Location::Oci(r) => &r.target,
            Location::Dir(r) => &r.target,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Tag(t) => write!(f, ":{t}"),
            Target::Digest(d) => write!(f, "@{d}"),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Oci(r) => write!(f, "oci://{}/{}{}", r.registry, r.repository, r.target),
            Location::Dir(r) => write!(f, "dir://{}{}", r.layout.display(), r.target),
        }
    }
}

impl OciRef {
    /// True for hosts reached over plain HTTP: `localhost` or a loopback
    /// IP address (`127.0.0.1`, `[::1]`), parsed as an address — a name
    /// such as `127.evil.example` is not loopback.
    pub fn is_loopback(&self) -> bool {
        let r = self.registry.as_str();
        let host = if let Some(rest) = r.strip_prefix('[') {
            rest.split(']').next().unwrap_or("")
        } else {
            r.rsplit_once(':').map_or(r, |(h, _)| h)
        };
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// Splits `path[:tag][@sha256:hex]` into the path and its target. The tag's
/// colon is the last one after the last `/`, so `host/a/b:1.0` and
/// `/srv/p:1.0` both work.
fn split_target(path: &str) -> Result<(&str, Target), String> {
    let (path, digest) = match path.split_once('@') {
        Some((p, d)) => (p, Some(d)),
        None => (path, None),
    };
    let last_slash = path.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match path[last_slash..].rfind(':') {
        Some(i) => (&path[..last_slash + i], Some(&path[last_slash + i + 1..])),
        None => (path, None),
    };
    if let Some(tag) = tag {
        check_tag(tag)?;
    }
    let target = match digest {
        Some(d) => Target::Digest(check_digest(d)?),
        None => Target::Tag(tag.unwrap_or("latest").to_string()),
    };
    Ok((path, target))
}

/// A `sha256:` digest, normalised to lowercase.
pub(crate) fn check_digest(d: &str) -> Result<String, String> {
    let hex = d
        .strip_prefix("sha256:")
        .ok_or_else(|| format!("the digest `{d}` must start with `sha256:`"))?;
    if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "the digest `{d}` must be `sha256:` followed by 64 hexadecimal digits"
        ));
    }
    Ok(format!("sha256:{}", hex.to_ascii_lowercase()))
}

/// The OCI distribution specification's tag grammar:
/// `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`.
fn check_tag(tag: &str) -> Result<(), String> {
    let mut chars = tag.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if first_ok && rest_ok && tag.len() <= 128 {
        Ok(())
    } else {
        Err(format!(
            "the tag `{tag}` is not valid (letters, digits, `_`, `.`, `-`; at most 128; not starting with `.` or `-`)"
        ))
    }
}

/// The distribution specification's repository grammar: lowercase
/// components of `[a-z0-9]` joined by `.`, `_`, `__` or `-`s, separated by `/`.
fn check_repository(repo: &str) -> Result<(), String> {
    let component_ok = |c: &str| {
        !c.is_empty()
            && c.starts_with(|ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit())
            && c.ends_with(|ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit())
            && c.chars().all(|ch| {
                ch.is_ascii_lowercase() || ch.is_ascii_digit() || matches!(ch, '.' | '_' | '-')
            })
    };
    if repo.split('/').all(component_ok) {
        Ok(())
    } else {
        Err(format!(
            "the repository `{repo}` is not valid (lowercase letters and digits, separated by `.`, `_`, `-` or `/`)"
        ))
    }
}

fn check_host(host: &str) -> Result<(), String> {
    let ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if ok {
        Ok(())
    } else {
        Err(format!("the registry host `{host}` is not a host[:port]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789";

    #[test]
    fn registry_references() {
        let Location::Oci(r) =
            Location::parse("oci://127.0.0.1:5000/team/kernel-stats:1.0").unwrap()
        else {
            panic!("not oci")
        };
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "team/kernel-stats");
        assert_eq!(r.target, Target::Tag("1.0".into()));
        assert!(r.is_loopback());

        let l = Location::parse("oci://reg.site.org/k").unwrap();
        assert_eq!(l.target(), &Target::Tag("latest".into()));
        assert_eq!(l.to_string(), "oci://reg.site.org/k:latest");
        let Location::Oci(r) = l else { panic!() };
        assert!(!r.is_loopback());

        for (host, loopback) in [
            ("127.0.0.1:5000", true),
            ("localhost", true),
            ("[::1]:5000", true),
            ("127.evil.example", false),
            ("127.0.0.1.nip.io:80", false),
        ] {
            let Location::Oci(r) = Location::parse(&format!("oci://{host}/k")).unwrap() else {
                panic!()
            };
            assert_eq!(r.is_loopback(), loopback, "{host}");
        }

        let l = Location::parse(&format!("oci://localhost:5000/k:1@{D}")).unwrap();
        assert_eq!(l.target(), &Target::Digest(D.to_ascii_lowercase()));
    }

    #[test]
    fn directory_references() {
        let l = Location::parse("dir:///srv/plugins/kernel-stats:2").unwrap();
        assert_eq!(
            l,
            Location::Dir(DirRef {
                layout: PathBuf::from("/srv/plugins/kernel-stats"),
                target: Target::Tag("2".into())
            })
        );
        let l = Location::parse("dir:///srv/p").unwrap();
        assert_eq!(l.target(), &Target::Tag("latest".into()));
    }

    #[test]
    fn bad_references_say_why() {
        for (spec, says) in [
            ("oci://host-only", "no repository"),
            ("oci://h/Upper", "repository `Upper`"),
            ("oci://h/r:-bad", "tag `-bad`"),
            ("oci://h/r@md5:00", "must start with `sha256:`"),
            ("oci://h/r@sha256:00", "64 hexadecimal"),
            ("dir://relative/p", "absolute path"),
            ("http://h/r", "starts with oci:// or dir://"),
        ] {
            let e = Location::parse(spec).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
            assert!(e.contains(spec), "{spec}: {e}");
        }
    }
}

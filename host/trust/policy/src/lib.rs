//! Who may run which plugin on a shared node, and a record of what ran.
//!
//! Cluster admins let any user run analysis plugins on shared GPU nodes
//! because plugins are sandboxed Wasm components; this crate adds the
//! rest of the trust model:
//!
//! - [`signature`]: ed25519 signatures carried inside the component, over
//!   its digest; `rocwasm plugin keygen|sign|verify`;
//! - [`policy`]: the site policy (`/etc/rocwasm/policy.toml`): trusted
//!   keys, allowed digests, caps on limits, capabilities, traced domains,
//!   the site audit log; a user cannot loosen or replace it;
//! - [`admit`]: holds a resolved run plan against the policy before
//!   anything starts, and records what it admitted;
//! - [`audit`]: the run's audit line (plugins, digests, signers, policy,
//!   grants, failures).
//!
//! It sits between the plan and the pipeline: `rocwasm run`, `replay` and
//! `check` admit the plan they made, and the pipeline admits the plan it
//! runs and writes the audit line at the end.

#![forbid(unsafe_code)]

pub mod admit;
pub mod audit;
pub mod policy;
pub mod signature;

pub use admit::{
    admit, imports, interfaces, Admission, AdmittedBy, AdmittedPlugin, Interfaces, Refusal,
};
pub use policy::{SitePolicy, SYSTEM_POLICY, TEST_POLICY_ENV};
pub use signature::{sign, KeyId, PluginDigest, PublicKey, SecretKey, SignatureError, Signatures};

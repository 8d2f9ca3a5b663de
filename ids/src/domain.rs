//! Domains: the sources of records, each tying together the buffer kind,
//! callback kind and external-correlation kind that describe the same thing.
//!
//! Producers (interception) speak in domains — "this is a HIP runtime call",
//! "this is a kernel dispatch" — and the engine routes the event to whichever
//! of the three services the contexts configured for it.

use crate::kind::{BufferTracingKind as B, CallbackTracingKind as C, ExternalCorrelationKind as E};

/// A source of records; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum Domain {
    /// HSA core API calls.
    HsaCoreApi,
    /// HSA AMD extension API calls.
    HsaAmdExtApi,
    /// HSA image extension API calls.
    HsaImageExtApi,
    /// HSA finalizer extension API calls.
    HsaFinalizeExtApi,
    /// HIP runtime API calls.
    HipRuntimeApi,
    /// HIP compiler API calls (`__hip*`).
    HipCompilerApi,
    /// roctx marks and ranges.
    MarkerCoreApi,
    /// roctx profiler pause/resume.
    MarkerControlApi,
    /// roctx naming calls.
    MarkerNameApi,
    /// roctx thread and process ranges.
    MarkerCoreRangeApi,
    /// RCCL calls.
    RcclApi,
    /// rocDecode calls.
    RocdecodeApi,
    /// rocJPEG calls.
    RocjpegApi,
    /// Kernel dispatches (async).
    KernelDispatch,
    /// Memory copies (async).
    MemoryCopy,
    /// Memory allocations.
    MemoryAllocation,
    /// Scratch-memory events.
    ScratchMemory,
    /// A runtime came up.
    RuntimeInitialization,
    /// An internal correlation id is no longer referenced.
    CorrelationIdRetirement,
    /// Code objects and kernel symbols loaded or unloaded.
    CodeObject,
}

impl Domain {
    /// Every domain, in index order.
    pub const ALL: &'static [Domain] = &[
        Domain::HsaCoreApi,
        Domain::HsaAmdExtApi,
        Domain::HsaImageExtApi,
        Domain::HsaFinalizeExtApi,
        Domain::HipRuntimeApi,
        Domain::HipCompilerApi,
        Domain::MarkerCoreApi,
        Domain::MarkerControlApi,
        Domain::MarkerNameApi,
        Domain::MarkerCoreRangeApi,
        Domain::RcclApi,
        Domain::RocdecodeApi,
        Domain::RocjpegApi,
        Domain::KernelDispatch,
        Domain::MemoryCopy,
        Domain::MemoryAllocation,
        Domain::ScratchMemory,
        Domain::RuntimeInitialization,
        Domain::CorrelationIdRetirement,
        Domain::CodeObject,
    ];

    /// The domain's dense index (`0..ALL.len()`), for per-domain tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The domain's bit in a 64-bit set of domains.
    pub const fn bit(self) -> u64 {
        1 << self as u64
    }

    /// `(buffer kind, callback kind, external-correlation kind)` of the domain.
    pub const fn kinds(self) -> (Option<B>, Option<C>, Option<E>) {
        use Domain as D;
        match self {
            D::HsaCoreApi => (
                Some(B::HsaCoreApi),
                Some(C::HsaCoreApi),
                Some(E::HsaCoreApi),
            ),
            D::HsaAmdExtApi => (
                Some(B::HsaAmdExtApi),
                Some(C::HsaAmdExtApi),
                Some(E::HsaAmdExtApi),
            ),
            D::HsaImageExtApi => (
                Some(B::HsaImageExtApi),
                Some(C::HsaImageExtApi),
                Some(E::HsaImageExtApi),
            ),
            D::HsaFinalizeExtApi => (
                Some(B::HsaFinalizeExtApi),
                Some(C::HsaFinalizeExtApi),
                Some(E::HsaFinalizeExtApi),
            ),
            D::HipRuntimeApi => (
                Some(B::HipRuntimeApi),
                Some(C::HipRuntimeApi),
                Some(E::HipRuntimeApi),
            ),
            D::HipCompilerApi => (
                Some(B::HipCompilerApi),
                Some(C::HipCompilerApi),
                Some(E::HipCompilerApi),
            ),
            D::MarkerCoreApi => (
                Some(B::MarkerCoreApi),
                Some(C::MarkerCoreApi),
                Some(E::MarkerCoreApi),
            ),
            D::MarkerControlApi => (
                Some(B::MarkerControlApi),
                Some(C::MarkerControlApi),
                Some(E::MarkerControlApi),
            ),
            D::MarkerNameApi => (
                Some(B::MarkerNameApi),
                Some(C::MarkerNameApi),
                Some(E::MarkerNameApi),
            ),
            D::MarkerCoreRangeApi => (
                Some(B::MarkerCoreRangeApi),
                Some(C::MarkerCoreRangeApi),
                Some(E::MarkerCoreRangeApi),
            ),
            D::RcclApi => (Some(B::RcclApi), Some(C::RcclApi), Some(E::RcclApi)),
            D::RocdecodeApi => (
                Some(B::RocdecodeApi),
                Some(C::RocdecodeApi),
                Some(E::RocdecodeApi),
            ),
            D::RocjpegApi => (
                Some(B::RocjpegApi),
                Some(C::RocjpegApi),
                Some(E::RocjpegApi),
            ),
            D::KernelDispatch => (
                Some(B::KernelDispatch),
                Some(C::KernelDispatch),
                Some(E::KernelDispatch),
            ),
            D::MemoryCopy => (
                Some(B::MemoryCopy),
                Some(C::MemoryCopy),
                Some(E::MemoryCopy),
            ),
            D::MemoryAllocation => (
                Some(B::MemoryAllocation),
                Some(C::MemoryAllocation),
                Some(E::MemoryAllocation),
            ),
            D::ScratchMemory => (
                Some(B::ScratchMemory),
                Some(C::ScratchMemory),
                Some(E::ScratchMemory),
            ),
            D::RuntimeInitialization => (
                Some(B::RuntimeInitialization),
                Some(C::RuntimeInitialization),
                None,
            ),
            D::CorrelationIdRetirement => (Some(B::CorrelationIdRetirement), None, None),
            D::CodeObject => (None, Some(C::CodeObject), None),
        }
    }

    /// The buffer-tracing kind of the domain's records, if it has one.
    pub const fn buffer_kind(self) -> Option<B> {
        self.kinds().0
    }

    /// The callback-tracing kind of the domain, if it has one.
    pub const fn callback_kind(self) -> Option<C> {
        self.kinds().1
    }

    /// The external-correlation request kind of the domain, if it has one.
    pub const fn external_kind(self) -> Option<E> {
        self.kinds().2
    }

    /// True for API-call domains (the ones the engine's `trace_api` serves).
    pub const fn is_api(self) -> bool {
        (self as u8) <= Domain::RocjpegApi as u8
    }

    /// The domain a buffer kind belongs to (`None` for kinds we do not produce).
    pub fn from_buffer_kind(kind: B) -> Option<Domain> {
        Domain::ALL
            .iter()
            .copied()
            .find(|d| d.buffer_kind() == Some(kind))
    }

    /// The domain a callback kind belongs to (`None` for kinds we do not produce).
    pub fn from_callback_kind(kind: C) -> Option<Domain> {
        Domain::ALL
            .iter()
            .copied()
            .find(|d| d.callback_kind() == Some(kind))
    }

    /// The domains whose external-correlation kind is `kind`.
    pub fn from_external_kind(kind: E) -> Option<Domain> {
        Domain::ALL
            .iter()
            .copied()
            .find(|d| d.external_kind() == Some(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops as registry;

    #[test]
    fn domain_kinds_agree_with_the_name_mapping() {
        assert!(Domain::ALL.len() <= 64);
        for (i, &d) in Domain::ALL.iter().enumerate() {
            assert_eq!(d.index(), i);
            let (b, c, e) = d.kinds();
            if let (Some(b), Some(c)) = (b, c) {
                assert_eq!(registry::callback_kind_of(b), Some(c), "{d:?}");
                assert_eq!(b.name(), c.name());
            }
            if let (Some(b), Some(e)) = (b, e) {
                assert_eq!(registry::external_kind_of_buffer(b), Some(e), "{d:?}");
            }
            if let Some(b) = b {
                assert_eq!(Domain::from_buffer_kind(b), Some(d));
            }
            if let Some(c) = c {
                assert_eq!(Domain::from_callback_kind(c), Some(d));
            }
        }
        assert!(Domain::RocjpegApi.is_api() && !Domain::KernelDispatch.is_api());
    }
}

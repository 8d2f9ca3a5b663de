//! `rocprofiler_status_t`: the errors the tool-facing model returns.

/// Declares [`Status`] with its SDK names in one list.
macro_rules! statuses {
    ($($variant:ident => $sdk:ident,)+) => {
        /// The SDK's `rocprofiler_status_t` values that the tool-facing model
        /// can return (`SUCCESS` is `Ok(())`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub enum Status {
            $(
                #[doc = concat!("`ROCPROFILER_STATUS_", stringify!($sdk), "`.")]
                $variant,
            )+
        }

        impl Status {
            /// The SDK name, e.g. `ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Status::$variant => concat!("ROCPROFILER_STATUS_", stringify!($sdk)),)+
                }
            }
        }
    };
}

statuses! {
    Error => ERROR,
    ContextNotFound => ERROR_CONTEXT_NOT_FOUND,
    BufferNotFound => ERROR_BUFFER_NOT_FOUND,
    KindNotFound => ERROR_KIND_NOT_FOUND,
    OperationNotFound => ERROR_OPERATION_NOT_FOUND,
    ThreadNotFound => ERROR_THREAD_NOT_FOUND,
    ContextInvalid => ERROR_CONTEXT_INVALID,
    BufferBusy => ERROR_BUFFER_BUSY,
    ServiceAlreadyConfigured => ERROR_SERVICE_ALREADY_CONFIGURED,
    ConfigurationLocked => ERROR_CONFIGURATION_LOCKED,
    NotImplemented => ERROR_NOT_IMPLEMENTED,
    Finalized => ERROR_FINALIZED,
    InvalidArgument => ERROR_INVALID_ARGUMENT,
    AgentNotFound => ERROR_AGENT_NOT_FOUND,
    CounterNotFound => ERROR_COUNTER_NOT_FOUND,
    ContextError => ERROR_CONTEXT_ERROR,
    ContextNotStarted => ERROR_CONTEXT_NOT_STARTED,
    MetricNotValidForAgent => ERROR_METRIC_NOT_VALID_FOR_AGENT,
    OutOfResources => ERROR_OUT_OF_RESOURCES,
    ProfileNotFound => ERROR_PROFILE_NOT_FOUND,
    AgentMismatch => ERROR_AGENT_MISMATCH,
    ExceedsHwLimit => ERROR_EXCEEDS_HW_LIMIT,
    AgentArchNotSupported => ERROR_AGENT_ARCH_NOT_SUPPORTED,
}

impl core::fmt::Display for Status {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::error::Error for Status {}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn statuses_display_their_sdk_names() {
        assert_eq!(
            Status::KindNotFound.to_string(),
            "ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND"
        );
        assert_eq!(Status::Error.to_string(), "ROCPROFILER_STATUS_ERROR");
    }
}

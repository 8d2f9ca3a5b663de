//! The functions of rocprofiler-sdk's C API that a client (a tool) calls,
//! declared as the headers declare them. Calling them needs a library that
//! defines them in the process: AMD's `librocprofiler-sdk`, or rocwasm's
//! tool library, whose SONAME is the same. Nothing here links one: the
//! symbols stay undefined in a client and are bound when it is loaded into
//! a process that has the SDK (as tools are: by the SDK itself).
//!
//! Only the functions rocwasm's own client uses are declared; add others
//! as they are needed, with the headers' signatures.

use std::ffi::{c_char, c_int, c_void};

use crate::{
    AgentsCallback, ArgCallback, BufferCallback, CallbackTracingRecord, Handle, OperationCallback,
    RequestCallback, TracingCallback,
};

/// `rocprofiler_status_t`.
pub type Status = c_int;

extern "C" {
    /// `rocprofiler_create_context`.
    pub fn rocprofiler_create_context(context_id: *mut Handle) -> Status;
    /// `rocprofiler_start_context`.
    pub fn rocprofiler_start_context(context_id: Handle) -> Status;
    /// `rocprofiler_stop_context`.
    pub fn rocprofiler_stop_context(context_id: Handle) -> Status;
    /// `rocprofiler_create_buffer`.
    pub fn rocprofiler_create_buffer(
        context: Handle,
        size: usize,
        watermark: usize,
        policy: c_int,
        callback: BufferCallback,
        callback_data: *mut c_void,
        buffer_id: *mut Handle,
    ) -> Status;
    /// `rocprofiler_flush_buffer`.
    pub fn rocprofiler_flush_buffer(buffer_id: Handle) -> Status;
    /// `rocprofiler_create_callback_thread`.
    pub fn rocprofiler_create_callback_thread(cb_thread_id: *mut Handle) -> Status;
    /// `rocprofiler_assign_callback_thread`.
    pub fn rocprofiler_assign_callback_thread(buffer_id: Handle, cb_thread_id: Handle) -> Status;
    /// `rocprofiler_configure_buffer_tracing_service`.
    pub fn rocprofiler_configure_buffer_tracing_service(
        context_id: Handle,
        kind: c_int,
        operations: *const i32,
        operations_count: usize,
        buffer_id: Handle,
    ) -> Status;
    /// `rocprofiler_configure_callback_tracing_service`.
    pub fn rocprofiler_configure_callback_tracing_service(
        context_id: Handle,
        kind: c_int,
        operations: *const i32,
        operations_count: usize,
        callback: TracingCallback,
        callback_args: *mut c_void,
    ) -> Status;
    /// `rocprofiler_configure_external_correlation_id_request_service`.
    pub fn rocprofiler_configure_external_correlation_id_request_service(
        context_id: Handle,
        kinds: *const c_int,
        kinds_count: usize,
        callback: RequestCallback,
        callback_args: *mut c_void,
    ) -> Status;
    /// `rocprofiler_query_buffer_tracing_kind_operation_name`.
    pub fn rocprofiler_query_buffer_tracing_kind_operation_name(
        kind: c_int,
        operation: i32,
        name: *mut *const c_char,
        name_len: *mut usize,
    ) -> Status;
    /// `rocprofiler_iterate_buffer_tracing_kind_operations`.
    pub fn rocprofiler_iterate_buffer_tracing_kind_operations(
        kind: c_int,
        callback: OperationCallback,
        data: *mut c_void,
    ) -> Status;
    /// `rocprofiler_query_available_agents`.
    pub fn rocprofiler_query_available_agents(
        version: c_int,
        callback: AgentsCallback,
        agent_size: usize,
        user_data: *mut c_void,
    ) -> Status;
    /// `rocprofiler_iterate_callback_tracing_kind_operation_args`.
    pub fn rocprofiler_iterate_callback_tracing_kind_operation_args(
        record: CallbackTracingRecord,
        callback: ArgCallback,
        max_dereference_count: c_int,
        user_data: *mut c_void,
    ) -> Status;
    /// `rocprofiler_get_status_string`.
    pub fn rocprofiler_get_status_string(status: Status) -> *const c_char;
    /// `rocprofiler_get_thread_id`.
    pub fn rocprofiler_get_thread_id(tid: *mut u64) -> Status;
    /// `rocprofiler_iterate_agent_supported_counters`.
    pub fn rocprofiler_iterate_agent_supported_counters(
        agent_id: Handle,
        cb: CountersCallback,
        user_data: *mut c_void,
    ) -> Status;
    /// `rocprofiler_query_counter_info` (`info`: the version's struct).
    pub fn rocprofiler_query_counter_info(
        counter_id: Handle,
        version: c_int,
        info: *mut c_void,
    ) -> Status;
    /// `rocprofiler_query_record_counter_id`.
    pub fn rocprofiler_query_record_counter_id(id: u64, counter_id: *mut Handle) -> Status;
    /// `rocprofiler_create_counter_config`.
    pub fn rocprofiler_create_counter_config(
        agent_id: Handle,
        counters_list: *const Handle,
        counters_count: usize,
        config_id: *mut Handle,
    ) -> Status;
    /// `rocprofiler_configure_buffer_dispatch_counting_service`.
    pub fn rocprofiler_configure_buffer_dispatch_counting_service(
        context_id: Handle,
        buffer_id: Handle,
        callback: DispatchCountingCallback,
        callback_data_args: *mut c_void,
    ) -> Status;
}

/// `rocprofiler_available_counters_cb_t`.
pub type CountersCallback =
    unsafe extern "C-unwind" fn(Handle, *mut Handle, usize, *mut c_void) -> Status;

/// `rocprofiler_dispatch_counting_service_cb_t`.
pub type DispatchCountingCallback = unsafe extern "C-unwind" fn(
    crate::records::DispatchCountingData,
    *mut Handle,
    *mut crate::UserData,
    *mut c_void,
);

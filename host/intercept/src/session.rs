//! Placeholder session (replaced when the engine lands).
use crate::args::{ArgList, Render};
use crate::tracer::ApiOp;
use rocwasm_core::BufferTracingKind;

pub struct Session;
impl Session {
    pub fn api_call<R: Render>(
        &self,
        _op: &'static ApiOp,
        _args: &dyn Fn(&mut ArgList),
        call: impl FnOnce() -> R,
    ) -> R {
        call()
    }
}
#[inline]
pub fn active() -> Option<&'static Session> {
    None
}
pub fn operation_id(_k: BufferTracingKind, _n: &str) -> Option<u32> {
    None
}
pub fn on_host_kernel(_k: &crate::hip::kernels::HostKernel) {}

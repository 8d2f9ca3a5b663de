//! The engine's integration tests, in one binary (each file a module).

mod buffers;
mod clock_source;
mod profiler;
mod reentrancy;

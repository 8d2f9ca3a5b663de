//! The simulated HIP runtime's tests, in one binary (each file a module).

mod support;

mod memory;
mod samples;
mod tools;

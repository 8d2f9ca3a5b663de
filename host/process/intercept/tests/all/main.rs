//! The tool library's end-to-end tests, in one binary (each file a module).

mod common;

mod chain;
mod generated;
mod real_hip;
mod sim;

//! The chain-file tests, in one binary (each file a module).

mod bad_chains;
mod good_chains;

//! The readers' integration tests, in one binary (each file a module).

mod errors;
mod every_table;
mod fixtures;
mod legacy_columns;
mod rocm7;
mod round_trip;
mod shared_schema;

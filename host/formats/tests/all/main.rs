//! The sinks' integration tests, in one binary (each file a module).

mod common;

mod claims;
mod csv_headers;
mod outputs;
mod parquet_memory;
mod perfetto_decode;
mod rocpd_fields;
mod rocpd_integrity;
mod rocpd_sqlite3;

//! `rocwasm-capi-convert`: rocprofiler-sdk's C structs ↔ rocwasm's engine
//! records, both directions of each struct in one place.
//!
//! Two crates speak the SDK's C types (`rocprofiler-sdk-sys`):
//! - `rocwasm-capi` implements the C API for native tools: it turns the
//!   engine's records, callbacks and agents **into** the C structs
//!   (`…_to_c`);
//! - `rocwasm-sdk-tool` runs rocwasm as a tool of AMD's SDK: it turns the
//!   SDK's C structs **into** the engine's records (`…_from_c`).
//!
//! Each struct's two directions sit side by side here, so a field mapped one
//! way and not the other shows, and each family has a round-trip test
//! (engine → C → engine gives back the original, for ordinary and edge
//! values; what the C struct cannot carry is listed in the test).
//!
//! The families, one module each:
//! - [`ids`]: what they all share (handles, correlation ids and the tool's
//!   external id, the `size` field, `dim3`);
//! - [`strings`]: C strings both ways;
//! - [`records`]: the buffer-tracing records (API calls, kernel dispatch,
//!   memory copy, allocation, scratch memory, retirement, runtime
//!   initialization) and the dispatch info;
//! - [`callbacks`]: the callback-tracing record and its payloads (API data's
//!   return value, dispatch and copy data, runtime initialization);
//! - [`symbols`]: code objects, kernel symbols, host kernel symbols;
//! - [`agents`]: `rocprofiler_agent_v0_t`, at the ABI table's offsets.
//!
//! Operation numbers are not converted here: the C API maps them with the
//! headers' tables, the tool with the names its SDK reports. The
//! conversions take the mapped number.
//!
//! This cannot live in `rocwasm-capi`: that crate defines the exported
//! `rocprofiler_*` functions, and the tool (a cdylib that calls AMD's real
//! library) would then define them too and bind its own calls to itself.

pub mod agents;
pub mod callbacks;
pub mod ids;
pub mod records;
pub mod strings;
pub mod symbols;

//! The tool library's SONAME is `librocprofiler-sdk.so.1`: it implements
//! rocprofiler-sdk's C API (`rocwasm-capi`), and a native tool linked with
//! `-lrocprofiler-sdk` names that SONAME. Preloaded by `rocwasm run`, the
//! library is already in the process when the tool's dependency is
//! resolved, and the loader takes an object already loaded under the
//! needed SONAME, so the tool binds to it (and to its engine) rather than
//! loading another copy.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librocprofiler-sdk.so.1");
}

//! Tells the export macros where the WIT package is.
//!
//! A plugin's bindings are generated *in the plugin crate* (a component
//! exports exactly one world, so the SDK cannot generate both worlds' exports
//! itself), and `wit_bindgen::generate!` resolves relative paths against the
//! crate that invokes it. So we bake the absolute path of `wit/` into a macro
//! the export macros call back through.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let wit = manifest.join("../../wit");
    let wit = fs::canonicalize(&wit)
        .unwrap_or_else(|e| panic!("the WIT package is expected at {}: {e}", wit.display()));
    for entry in fs::read_dir(&wit).expect("readable wit/ directory") {
        let path = entry.expect("readable wit/ entry").path();
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!("cargo:rerun-if-changed={}", wit.display());

    let dir = wit.to_str().expect("the WIT path is UTF-8");
    let source = format!(
        "/// Calls `$callback!(\"<absolute wit dir>\"; ...)`.\n\
         #[doc(hidden)]\n\
         #[macro_export]\n\
         macro_rules! __rocwasm_with_wit_dir {{\n\
         \x20   ($callback:path; $($rest:tt)*) => {{ $callback!({dir:?}; $($rest)*); }};\n\
         }}\n"
    );
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo")).join("wit_dir.rs");
    fs::write(&out, source).expect("writable OUT_DIR");
}

//! `rocwasm sdk prefix`: a rocprofiler-sdk install prefix for native tools.
//!
//! Build systems find AMD's SDK through its prefix: `include/` (the
//! headers), `lib/librocprofiler-sdk.so` (the library), the CMake packages
//! (`find_package(rocprofiler-sdk)` → `rocprofiler-sdk::rocprofiler-sdk`,
//! `find_package(rocprofiler-sdk-roctx)` →
//! `rocprofiler-sdk-roctx::rocprofiler-sdk-roctx`) and, for Makefiles,
//! `lib/pkgconfig/rocprofiler-sdk.pc` and `rocprofiler-sdk-roctx.pc`, and
//! the package's CMake modules (`lib/cmake/rocprofiler-sdk/Modules`:
//! `rocprofiler-sdk-utilities.cmake` with `rocprofiler_sdk_get_gfx_architectures`,
//! which answers with the simulated GPUs' architectures, and `Findlibdw.cmake`;
//! written by us, `capi/cmake/`), which `find_package(rocprofiler-sdk)`
//! puts on `CMAKE_MODULE_PATH` and includes as AMD's package does. This
//! command writes the same layout: the headers embedded in this binary
//! (`capi/include/`), the library as a link to rocwasm's tool library
//! (whose SONAME is `librocprofiler-sdk.so.1`), and the package files.
//! `librocprofiler-sdk-roctx.so` links to the simulated runtime's roctx
//! library when one is found (the same `roctx*` functions), else to the
//! tool library, which exports them too.
//!
//! Every file is written to a temporary name and renamed, so two commands
//! writing the same prefix at once leave it whole.

use std::path::{Path, PathBuf};

use crate::failure::{Failure, Result};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/sdk_headers.rs"));
}

/// The CMake modules of the rocprofiler-sdk package (`capi/cmake/Modules`).
const CMAKE_MODULES: &[(&str, &str)] = &[
    (
        "rocprofiler-sdk-utilities.cmake",
        include_str!("../../../../../capi/cmake/Modules/rocprofiler-sdk-utilities.cmake"),
    ),
    (
        "Findlibdw.cmake",
        include_str!("../../../../../capi/cmake/Modules/Findlibdw.cmake"),
    ),
];

/// The SDK version the headers describe.
const VERSION: &str = "1.0.0";

pub fn prefix(into: Option<&Path>) -> Result {
    let dir = match into {
        Some(d) => d.to_path_buf(),
        None => rocwasm_plan::dirs::cache_home()
            .ok_or_else(|| {
                Failure::runtime(
                    "no cache directory (set XDG_CACHE_HOME or HOME), or pass --into DIR",
                )
            })?
            .join("sdk")
            .join(VERSION),
    };
    let tool = rocwasm_launch::Install::current_exe()
        .tool_library()
        .ok_or_else(|| {
            Failure::runtime(format!(
                "cannot find {} next to the rocwasm binary or in the target directory \
             (build it with `cargo xtask build-sdk`, or set ROCWASM_INTERCEPT_LIB)",
                rocwasm_launch::TOOL_LIB
            ))
        })?;
    write_prefix(&dir, &tool, roctx_library().as_deref()).map_err(|e| {
        Failure::runtime(format!(
            "cannot write the SDK prefix {}: {e}",
            dir.display()
        ))
    })?;
    println!("{}", dir.display());
    Ok(())
}

/// The simulated runtime's `libroctx64.so.4`, if rocwasm can find it.
fn roctx_library() -> Option<PathBuf> {
    let dir = match std::env::var_os("ROCWASM_SIM_LIB") {
        Some(d) => PathBuf::from(d),
        None => {
            let exe = std::env::current_exe().ok()?;
            exe.parent()?.join("../sim/lib")
        }
    };
    let lib = dir.join("libroctx64.so.4");
    lib.is_file().then(|| lib.canonicalize().unwrap_or(lib))
}

fn write_prefix(dir: &Path, tool: &Path, roctx: Option<&Path>) -> std::io::Result<()> {
    for (rel, bytes) in embedded::HEADERS {
        write_file(&dir.join("include").join(rel), bytes)?;
    }
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib)?;
    link(tool, &lib.join("librocprofiler-sdk.so.1"))?;
    link(
        Path::new("librocprofiler-sdk.so.1"),
        &lib.join("librocprofiler-sdk.so"),
    )?;
    link(
        roctx.unwrap_or(tool),
        &lib.join("librocprofiler-sdk-roctx.so.1"),
    )?;
    link(
        Path::new("librocprofiler-sdk-roctx.so.1"),
        &lib.join("librocprofiler-sdk-roctx.so"),
    )?;
    let prefix = dir.canonicalize()?;
    for (name, lib_name, description) in [
        (
            "rocprofiler-sdk",
            "rocprofiler-sdk",
            "rocprofiler-sdk's C API on rocwasm",
        ),
        (
            "rocprofiler-sdk-roctx",
            "rocprofiler-sdk-roctx",
            "ROCTx markers for rocprofiler-sdk tools on rocwasm",
        ),
    ] {
        write_file(
            &lib.join("pkgconfig").join(format!("{name}.pc")),
            pkg_config(&prefix, name, lib_name, description).as_bytes(),
        )?;
        let cmake = lib.join("cmake").join(name);
        write_file(
            &cmake.join(format!("{name}-config.cmake")),
            cmake_config(name, lib_name).as_bytes(),
        )?;
        write_file(
            &cmake.join(format!("{name}-config-version.cmake")),
            cmake_version().as_bytes(),
        )?;
        if name == "rocprofiler-sdk" {
            for (file, text) in CMAKE_MODULES {
                write_file(&cmake.join("Modules").join(file), text.as_bytes())?;
            }
        }
    }
    Ok(())
}

fn pkg_config(prefix: &Path, name: &str, lib: &str, description: &str) -> String {
    format!(
        "prefix={}\nincludedir=${{prefix}}/include\nlibdir=${{prefix}}/lib\n\n\
         Name: {name}\nDescription: {description}\nVersion: {VERSION}\n\
         Cflags: -I${{includedir}}\nLibs: -L${{libdir}} -l{lib}\n",
        prefix.display()
    )
}

/// A config file defining `<name>::<name>` as an imported shared library
/// whose paths are relative to the file, so the prefix can move; a package
/// with a `Modules` directory appends it to `CMAKE_MODULE_PATH` (so
/// `find_package(libdw)` finds the shipped `Findlibdw.cmake`) and includes
/// its utilities, as AMD's config file does.
fn cmake_config(name: &str, lib: &str) -> String {
    let modules = if name == "rocprofiler-sdk" {
        r#"set(rocprofiler-sdk_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/Modules")
    list(FIND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}/Modules" _rocwasm_at)
    if(_rocwasm_at EQUAL -1)
        list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}/Modules")
    endif()
    unset(_rocwasm_at)
    include(rocprofiler-sdk-utilities)
endif()
"#
    } else {
        ""
    };
    format!(
        r#"# {name} on rocwasm (written by `rocwasm sdk prefix`).
get_filename_component(_rocwasm_prefix "${{CMAKE_CURRENT_LIST_DIR}}/../../.." ABSOLUTE)
if(NOT TARGET {name}::{name})
    add_library({name}::{name} SHARED IMPORTED)
    set_target_properties({name}::{name} PROPERTIES
        IMPORTED_LOCATION "${{_rocwasm_prefix}}/lib/lib{lib}.so.1"
        IMPORTED_SONAME "lib{lib}.so.1"
        INTERFACE_INCLUDE_DIRECTORIES "${{_rocwasm_prefix}}/include")
endif()
set({name}_FOUND TRUE)
set({name}_VERSION "{VERSION}")
set({name}_INCLUDE_DIR "${{_rocwasm_prefix}}/include")
set({name}_LIBRARY {name}::{name})
set({name}_ROOT_DIR "${{_rocwasm_prefix}}")
unset(_rocwasm_prefix)
{modules}"#
    )
}

fn cmake_version() -> String {
    format!(
        r#"set(PACKAGE_VERSION "{VERSION}")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
    if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
        set(PACKAGE_VERSION_EXACT TRUE)
    endif()
endif()
"#
    )
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return Ok(());
    }
    let tmp = parent.join(format!(
        ".{}.{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Makes `link` a symbolic link to `target` (replacing what was there).
fn link(target: &Path, link: &Path) -> std::io::Result<()> {
    if std::fs::read_link(link).ok().as_deref() == Some(target) {
        return Ok(());
    }
    let tmp = link.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)?;
    std::fs::rename(&tmp, link)
}

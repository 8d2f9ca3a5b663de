//! `cargo xtask gen-intercept`: generates the HIP interposers of
//! `host/intercept` from the real headers and the real library.
//!
//! Why a checked-in generated file instead of a `build.rs`: building the tool
//! library must not require libclang or the ROCm headers (a user's machine may
//! have a different ROCm, or none), and the set of interposed functions must be
//! reviewable in a diff. The generator is run when the target ROCm changes; a
//! test in `host/intercept` checks that the generated set still equals the
//! library's export list when the library is installed.
//!
//! How it works:
//! 1. The export list: every `hip*`/`__hip*` function `readelf --dyn-syms`
//!    shows as defined in Debian's `libamdhip64.so.5` (version suffixes cut).
//! 2. The signatures: `clang-15 -Xclang -ast-dump=json` over the public headers
//!    (`hip_runtime_api.h`, `hip_ext.h`, `hiprtc.h`, `amd_detail/hip_runtime_prof.h`).
//!    Only declarations with C linkage (mangled name == name), not inline and
//!    not templates, are taken: the C++ convenience overloads of the headers
//!    are not what the library exports.
//! 3. Exports with no declaration in any header (the compiler-emitted
//!    `__hipRegister*` family, `__hipGetPCH`) get the signatures clang's HIP
//!    code generation calls them with, listed in [`UNDECLARED`].
//! 4. Each C type maps to an ABI-identical Rust type: every pointer is a
//!    `*mut`/`*const c_void` (or `c_char` for strings, so they render as
//!    text), enums are `i32` (C ints), and the few structs passed by value get
//!    `#[repr(C)]` twins in `host/intercept/src/hip/types.rs`. An unknown type
//!    is an error, so a new by-value struct cannot slip through with a wrong ABI.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

const LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
const HEADERS: &[&str] = &[
    "hip/hip_runtime_api.h",
    "hip/hip_ext.h",
    "hip/hiprtc.h",
    "hip/amd_detail/hip_runtime_prof.h",
];
const OUTPUT: &str = "host/intercept/src/hip/generated.rs";

/// Signatures of exported functions no public header declares: what clang's
/// HIP code generation emits calls to (`__hipRegister*`), and `__hipGetPCH`.
/// Format: (name, return type, [(parameter name, C type)]).
const UNDECLARED: &[(&str, &str, &[(&str, &str)])] = &[
    (
        "__hipRegisterFatBinary",
        "void **",
        &[("data", "const void *")],
    ),
    (
        "__hipRegisterFunction",
        "void",
        &[
            ("modules", "void **"),
            ("hostFunction", "const void *"),
            ("deviceFunction", "char *"),
            ("deviceName", "const char *"),
            ("threadLimit", "unsigned int"),
            ("tid", "void *"),
            ("bid", "void *"),
            ("blockDim", "dim3 *"),
            ("gridDim", "dim3 *"),
            ("wSize", "int *"),
        ],
    ),
    (
        "__hipRegisterVar",
        "void",
        &[
            ("modules", "void **"),
            ("var", "void *"),
            ("hostVar", "char *"),
            ("deviceVar", "char *"),
            ("ext", "int"),
            ("size", "size_t"),
            ("constant", "int"),
            ("global", "int"),
        ],
    ),
    (
        "__hipRegisterManagedVar",
        "void",
        &[
            ("hipModule", "void *"),
            ("pointer", "void **"),
            ("init_value", "void *"),
            ("name", "const char *"),
            ("size", "size_t"),
            ("align", "unsigned int"),
        ],
    ),
    (
        "__hipRegisterSurface",
        "void",
        &[
            ("modules", "void **"),
            ("var", "void *"),
            ("hostVar", "char *"),
            ("deviceVar", "char *"),
            ("type", "int"),
            ("ext", "int"),
        ],
    ),
    (
        "__hipRegisterTexture",
        "void",
        &[
            ("modules", "void **"),
            ("var", "void *"),
            ("hostVar", "char *"),
            ("deviceVar", "char *"),
            ("type", "int"),
            ("norm", "int"),
            ("ext", "int"),
        ],
    ),
    (
        "__hipUnregisterFatBinary",
        "void",
        &[("modules", "void **")],
    ),
    (
        "__hipGetPCH",
        "void",
        &[("pch", "const char **"), ("size", "unsigned int *")],
    ),
];

/// The compiler-interface functions: the SDK's HIP_COMPILER_API kind (FACTS §4's
/// 9-entry compiler table). Everything else is HIP_RUNTIME_API.
const COMPILER_API: &[&str] = &[
    "__hipPopCallConfiguration",
    "__hipPushCallConfiguration",
    "__hipRegisterFatBinary",
    "__hipRegisterFunction",
    "__hipRegisterManagedVar",
    "__hipRegisterSurface",
    "__hipRegisterTexture",
    "__hipRegisterVar",
    "__hipUnregisterFatBinary",
];

/// Structs passed or returned by value, and their `#[repr(C)]` twins.
const BY_VALUE: &[(&str, &str)] = &[
    ("dim3", "Dim3"),
    ("hipExtent", "HipExtent"),
    ("hipPitchedPtr", "HipPitchedPtr"),
    ("hipIpcEventHandle_t", "HipIpcHandle"),
    ("hipIpcEventHandle_st", "HipIpcHandle"),
    ("hipIpcMemHandle_t", "HipIpcHandle"),
    ("hipIpcMemHandle_st", "HipIpcHandle"),
    ("hipChannelFormatDesc", "HipChannelFormatDesc"),
];

struct Param {
    name: String,
    c_type: String,
    rust: String,
}

struct Function {
    name: String,
    ret_c: String,
    ret_rust: String,
    params: Vec<Param>,
}

pub fn generate() -> Result<()> {
    let exports = exports(Path::new(LIBRARY))?;
    let (decls, enums) = declarations()?;

    let mut functions = Vec::new();
    let mut problems = Vec::new();
    for name in &exports {
        let (ret, params): (String, Vec<(String, String)>) = if let Some(d) = decls.get(name) {
            d.clone()
        } else if let Some((_, r, ps)) = UNDECLARED.iter().find(|(n, _, _)| n == name) {
            (
                r.to_string(),
                ps.iter()
                    .map(|(n, t)| (n.to_string(), t.to_string()))
                    .collect(),
            )
        } else {
            problems.push(format!("{name}: exported but declared nowhere"));
            continue;
        };
        let mut f = Function {
            name: name.clone(),
            ret_rust: String::new(),
            ret_c: ret.clone(),
            params: Vec::new(),
        };
        match rust_type(&ret, &enums) {
            Ok(t) => f.ret_rust = t,
            Err(e) => problems.push(format!("{name} returns {e}")),
        }
        for (i, (pname, ptype)) in params.into_iter().enumerate() {
            let pname = if pname.is_empty() {
                format!("arg{i}")
            } else {
                pname
            };
            match rust_type(&ptype, &enums) {
                Ok(rust) => f.params.push(Param {
                    name: rust_ident(&pname),
                    c_type: ptype,
                    rust,
                }),
                Err(e) => problems.push(format!("{name}({pname}): {e}")),
            }
        }
        functions.push(f);
    }
    if !problems.is_empty() {
        bail!(
            "cannot generate every interposer:\n  {}",
            problems.join("\n  ")
        );
    }

    let out = crate::util::root().join(OUTPUT);
    std::fs::write(&out, render(&functions))
        .with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("wrote {} ({} functions)", out.display(), functions.len());
    crate::util::run(Command::new("rustfmt").arg("--edition=2021").arg(&out))
}

/// The `hip*`/`__hip*` functions the library defines, sorted, without versions.
fn exports(lib: &Path) -> Result<Vec<String>> {
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W"])
        .arg(lib)
        .output()
        .with_context(|| format!("cannot run readelf on {}", lib.display()))?;
    if !out.status.success() {
        bail!(
            "readelf failed on {} (is libamdhip64-5 installed?)",
            lib.display()
        );
    }
    let mut names = BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        // Num: Value Size Type Bind Vis Ndx Name
        if cols.len() >= 8 && cols[3] == "FUNC" && cols[4] == "GLOBAL" && cols[6] != "UND" {
            let name = cols[7].split('@').next().unwrap_or_default();
            if name.starts_with("hip") || name.starts_with("__hip") {
                names.insert(name.to_string());
            }
        }
    }
    Ok(names.into_iter().collect())
}

type Decl = (String, Vec<(String, String)>);

/// C-linkage function declarations of the headers (name → (return, params)),
/// and the names of every enum type (including typedefs of enums).
fn declarations() -> Result<(BTreeMap<String, Decl>, BTreeSet<String>)> {
    let mut source = String::new();
    for h in HEADERS {
        writeln!(source, "#include <{h}>")?;
    }
    let tmp = std::env::temp_dir().join(format!("rocwasm-gen-hip-{}.h", std::process::id()));
    std::fs::write(&tmp, source)?;
    let out = Command::new("clang-15")
        .args([
            "-Xclang",
            "-ast-dump=json",
            "-fsyntax-only",
            "-D__HIP_PLATFORM_AMD__",
            "-x",
            "c++",
        ])
        .arg(&tmp)
        .output()
        .context("cannot run clang-15 (apt-get install clang-15)")?;
    let _ = std::fs::remove_file(&tmp);
    if !out.status.success() {
        bail!("clang-15 failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let ast: Value = serde_json::from_slice(&out.stdout).context("clang's JSON AST")?;

    let mut decls = BTreeMap::new();
    let mut enums = BTreeSet::new();
    walk(&ast, &mut decls, &mut enums, &mut BTreeSet::new());
    Ok((decls, enums))
}

fn walk(
    node: &Value,
    decls: &mut BTreeMap<String, Decl>,
    enums: &mut BTreeSet<String>,
    has_c: &mut BTreeSet<String>,
) {
    let kind = node["kind"].as_str().unwrap_or_default();
    let name = node["name"].as_str().unwrap_or_default();
    match kind {
        "EnumDecl" if !name.is_empty() => {
            enums.insert(name.to_string());
        }
        "TypedefDecl" => {
            // `typedef enum X {…} Y;` and `typedef enum X Y;`.
            let inner = node["inner"].to_string();
            if inner.contains("\"EnumType\"") {
                enums.insert(name.to_string());
            }
        }
        "FunctionDecl" => {
            // Prefer C-linkage declarations; a C++-linkage one (hip_runtime_prof.h
            // forgets `extern "C"`) is kept only until a C one turns up. The
            // library exports the plain name either way.
            let c_linkage = node["mangledName"].as_str() == Some(name);
            let inline = node["inline"].as_bool().unwrap_or(false);
            let replace = match decls.get(name) {
                None => true,
                Some(_) => c_linkage && !has_c.contains(name),
            };
            if c_linkage {
                has_c.insert(name.to_string());
            }
            if !inline && replace {
                let ty = node["type"]["qualType"].as_str().unwrap_or_default();
                let ret = ty.split('(').next().unwrap_or_default().trim().to_string();
                let params = node["inner"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["kind"] == "ParmVarDecl")
                    .map(|p| {
                        let t = &p["type"];
                        let written = t["qualType"].as_str().unwrap_or_default();
                        (
                            p["name"].as_str().unwrap_or_default().to_string(),
                            written.to_string(),
                        )
                    })
                    .collect();
                decls.insert(name.to_string(), (ret, params));
            }
            return;
        }
        _ => {}
    }
    if matches!(
        kind,
        "TranslationUnitDecl" | "LinkageSpecDecl" | "NamespaceDecl"
    ) {
        for child in node["inner"].as_array().into_iter().flatten() {
            walk(child, decls, enums, has_c);
        }
    }
}

/// The Rust type with the same ABI as the C type `c`.
fn rust_type(c: &str, enums: &BTreeSet<String>) -> Result<String, String> {
    let c = c.trim();
    if c.contains('*') || c.contains('(') {
        let depth = c.matches('*').count();
        let base = c.trim_end_matches(|ch: char| ch == '*' || ch == ' ');
        let is_const = c.starts_with("const ");
        if depth == 1 && (base.trim() == "const char" || base.trim() == "char") {
            return Ok(if is_const {
                "*const c_char"
            } else {
                "*mut c_char"
            }
            .into());
        }
        return Ok(if is_const && depth == 1 {
            "*const c_void"
        } else {
            "*mut c_void"
        }
        .into());
    }
    let bare = c
        .trim_start_matches("const ")
        .trim_start_matches("enum ")
        .trim_start_matches("struct ");
    // Handles that are pointer typedefs (hipStream_t, …) are resolved by clang's
    // desugared type in most cases, but we see the written type: list them.
    const POINTER_TYPEDEFS: &[&str] = &[
        "hipStream_t",
        "hipEvent_t",
        "hipCtx_t",
        "hipModule_t",
        "hipFunction_t",
        "hipDeviceptr_t",
        "hipGraph_t",
        "hipGraphNode_t",
        "hipGraphExec_t",
        "hipArray_t",
        "hipArray_const_t",
        "hipMipmappedArray_t",
        "hipMipmappedArray_const_t",
        "hipTextureObject_t",
        "hipSurfaceObject_t",
        "hipMemPool_t",
        "hipExternalMemory_t",
        "hipExternalSemaphore_t",
        "hipGraphicsResource_t",
        "hipMemGenericAllocationHandle_t",
        "hiprtcProgram",
        "hipStreamCallback_t",
        "hipHostFn_t",
    ];
    if POINTER_TYPEDEFS.contains(&bare) {
        return Ok("*mut c_void".into());
    }
    let scalar = match bare {
        "void" => "()",
        "bool" => "bool",
        "int" | "hipDevice_t" => "i32",
        "unsigned int" | "uint32_t" | "GLenum" | "GLuint" => "u32",
        "size_t" => "usize",
        "unsigned long" | "uint64_t" | "unsigned long long" => "u64",
        "long long" | "int64_t" => "i64",
        "unsigned char" => "u8",
        "unsigned short" => "u16",
        "float" => "f32",
        "double" => "f64",
        "hipError_t" | "hiprtcResult" => "i32",
        _ => "",
    };
    if !scalar.is_empty() {
        return Ok(scalar.into());
    }
    if enums.contains(bare) {
        return Ok("i32".into());
    }
    if let Some((_, twin)) = BY_VALUE.iter().find(|(n, _)| *n == bare) {
        return Ok(format!("types::{twin}"));
    }
    Err(format!("unmapped C type `{c}`"))
}

fn rust_ident(name: &str) -> String {
    match name {
        "type" | "ref" | "fn" | "mod" | "move" | "in" | "match" | "loop" | "use" | "impl"
        | "self" | "struct" | "enum" | "trait" | "where" | "async" | "await" | "dyn" | "box"
        | "crate" => {
            format!("r#{name}")
        }
        _ => name.to_string(),
    }
}

fn render(functions: &[Function]) -> String {
    let mut s = String::new();
    s.push_str(
        "// @generated by `cargo xtask gen-intercept` from the ROCm 5.2 HIP headers and the\n\
         // export list of Debian's libamdhip64.so.5. Do not edit by hand.\n\
         //\n\
         // Each line: the compiler-or-runtime kind, the name, the parameters with their\n\
         // Rust type and C type (the C type is what argument rendering shows), the return\n\
         // type. `hip_interposers!` (src/hip/interpose.rs) turns each into an exported\n\
         // wrapper.\n\n",
    );
    s.push_str("hip_interposers! {\n");
    for f in functions {
        let kind = if COMPILER_API.contains(&f.name.as_str()) {
            "compiler"
        } else {
            "runtime"
        };
        write!(s, "    {kind} fn {}(", f.name).unwrap();
        let ps: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {} = {:?}", p.name, p.rust, p.c_type))
            .collect();
        s.push_str(&ps.join(", "));
        writeln!(s, ") -> {} = {:?};", f.ret_rust, f.ret_c).unwrap();
    }
    s.push_str("}\n");
    s
}

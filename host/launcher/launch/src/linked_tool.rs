//! Does a program carry a rocprofiler-sdk tool of its own?
//!
//! The SDK finds a tool by the `rocprofiler_configure` symbol of any object
//! loaded in the process, not only through `ROCP_TOOL_LIBRARIES`: AMD's
//! sample programs link their tool library into the program. So `rocwasm
//! run` with no tracing option is not "nothing to profile" when the
//! program, or a library it links directly, defines that symbol. This
//! reads the ELF files' dynamic symbol tables (the program's, then each
//! `DT_NEEDED` library's, found the way the dynamic loader looks: the
//! program's `DT_RUNPATH`/`DT_RPATH` with `$ORIGIN`, `LD_LIBRARY_PATH`,
//! then the system directories); a tool opened later with `dlopen` is not
//! seen (name it in `ROCP_TOOL_LIBRARIES`).

use std::path::{Path, PathBuf};

use object::read::elf::{Dyn as _, ElfFile64, FileHeader as _, Sym as _};
use object::Endianness;

/// The symbol a tool library defines.
const CONFIGURE: &[u8] = b"rocprofiler_configure";

/// Libraries that are never tools (the C runtime, ROCm's runtimes): not read.
const NOT_TOOLS: &[&str] = &[
    "libc.so",
    "libm.so",
    "libdl.so",
    "librt.so",
    "libpthread.so",
    "libstdc++.so",
    "libgcc_s.so",
    "ld-linux",
    "libamdhip64.so",
    "libhsa-runtime64.so",
    "libroctx64.so",
    "librocprofiler-sdk.so",
    "librocprofiler-register.so",
];

/// True when `program` (a path, or a name looked up on `PATH`) or a
/// library it links defines `rocprofiler_configure`.
pub fn links_tool(program: &str) -> bool {
    let Some(path) = resolve_program(program) else {
        return false;
    };
    let Some(elf) = Elf::read(&path) else {
        return false;
    };
    if elf.defines_configure {
        return true;
    }
    let origin = path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut dirs: Vec<PathBuf> = elf
        .search_path
        .iter()
        .flat_map(|list| list.split(':'))
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d.replace("$ORIGIN", &origin.to_string_lossy())))
        .collect();
    if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&paths));
    }
    dirs.extend(
        [
            "/lib/x86_64-linux-gnu",
            "/usr/lib/x86_64-linux-gnu",
            "/lib64",
            "/usr/lib64",
            "/lib",
            "/usr/lib",
            "/usr/local/lib",
        ]
        .map(PathBuf::from),
    );
    elf.needed
        .iter()
        .filter(|name| !NOT_TOOLS.iter().any(|n| name.starts_with(n)))
        .filter_map(|name| {
            if name.contains('/') {
                Some(PathBuf::from(name))
            } else {
                dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
            }
        })
        .any(|lib| Elf::read(&lib).is_some_and(|e| e.defines_configure))
}

/// `program` as `execvp` would find it.
fn resolve_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// What this module reads of one 64-bit ELF file.
struct Elf {
    defines_configure: bool,
    needed: Vec<String>,
    /// `DT_RUNPATH`, else `DT_RPATH`.
    search_path: Option<String>,
}

impl Elf {
    /// `None` for a file that cannot be read or is no 64-bit ELF (a
    /// script, say: the launcher then profiles as asked, no more).
    fn read(path: &Path) -> Option<Elf> {
        let data = std::fs::read(path).ok()?;
        let file = ElfFile64::<Endianness>::parse(&*data).ok()?;
        let endian = file.elf_header().endian().ok()?;
        let sections = file.elf_section_table();
        let symbols = sections
            .symbols(endian, &*data, object::elf::SHT_DYNSYM)
            .ok()?;
        let defines_configure = symbols.iter().any(|s| {
            s.st_shndx(endian) != object::elf::SHN_UNDEF
                && symbols.symbol_name(endian, s).ok() == Some(CONFIGURE)
        });
        let mut elf = Elf {
            defines_configure,
            needed: Vec::new(),
            search_path: None,
        };
        let Ok(Some((entries, link))) = sections.dynamic(endian, &*data) else {
            return Some(elf);
        };
        let Ok(strings) = sections.strings(endian, &*data, link) else {
            return Some(elf);
        };
        let (mut runpath, mut rpath) = (None, None);
        for e in entries {
            let text = || {
                e.string(endian, strings)
                    .ok()
                    .map(|s| String::from_utf8_lossy(s).into_owned())
            };
            match e.d_tag(endian) as i64 {
                object::elf::DT_NEEDED => elf.needed.extend(text()),
                object::elf::DT_RUNPATH => runpath = text(),
                object::elf::DT_RPATH => rpath = text(),
                _ => {}
            }
        }
        elf.search_path = runpath.or(rpath);
        Some(elf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_without_a_tool_and_non_elf_files_have_none() {
        // This test binary links no tool; a shell script is no ELF file.
        let me = std::env::current_exe().unwrap();
        assert!(!links_tool(me.to_str().unwrap()));
        assert!(!links_tool("/bin/sh"));
        assert!(!links_tool("/nonexistent/program"));
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert!(!links_tool(script.to_str().unwrap()));
    }
}

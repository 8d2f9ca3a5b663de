//! Reading what hipcc produces: the clang offload bundle and the AMDGPU
//! metadata note of each code object.
//!
//! A bundle is `"__CLANG_OFFLOAD_BUNDLE__"`, a `u64` entry count, then per
//! entry `u64 offset, u64 size, u64 triple length, triple`; offsets are from
//! the start of the bundle. Device entries have triples like
//! `hipv4-amdgcn-amd-amdhsa--gfx90a` (optionally with target features,
//! `gfx90a:xnack-`). A code object is an AMDGPU ELF whose `NT_AMDGPU_METADATA`
//! note (type 32, owner `AMDGPU`) is a msgpack map; `amdhsa.kernels` lists
//! each kernel's name, `.kd` symbol, kernarg layout and resource usage.

use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
use object::Endianness;

pub const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
const NT_AMDGPU_METADATA: u32 = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub offset: u32,
    pub size: u32,
    pub value_kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelMeta {
    pub name: String,
    pub symbol: String,
    pub kernarg_size: u32,
    pub kernarg_align: u32,
    pub args: Vec<Arg>,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub sgpr_count: u32,
    pub vgpr_count: u32,
    pub wavefront_size: u32,
    pub max_flat_workgroup_size: u32,
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    bytes
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
}

/// The entries of a bundle: `(triple, bytes)`.
pub fn parse_bundle(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, String> {
    if !bytes.starts_with(BUNDLE_MAGIC) {
        return Err("not a clang offload bundle".into());
    }
    let count = u64_at(bytes, 24).ok_or("truncated bundle header")?;
    let mut at = 32;
    let mut entries = Vec::new();
    for _ in 0..count {
        let (offset, size, len) = (
            u64_at(bytes, at),
            u64_at(bytes, at + 8),
            u64_at(bytes, at + 16),
        );
        let (Some(offset), Some(size), Some(len)) = (offset, size, len) else {
            return Err("truncated bundle entry".into());
        };
        at += 24;
        let triple = bytes
            .get(at..at + len as usize)
            .ok_or("truncated bundle triple")?;
        at += len as usize;
        let data = bytes
            .get(offset as usize..(offset + size) as usize)
            .ok_or("bundle entry out of range")?;
        entries.push((String::from_utf8_lossy(triple).into_owned(), data));
    }
    Ok(entries)
}

/// Total length of a bundle whose header is at `ptr`, read step by step so
/// nothing past the bundle is touched.
///
/// # Safety
/// `ptr` must point to a complete clang offload bundle.
pub unsafe fn bundle_len(ptr: *const u8) -> Option<usize> {
    let read = |at: usize, n: usize| {
        // SAFETY: for every read below, the caller guarantees a complete
        // bundle, and each read stays inside the header described by the
        // fields before it.
        unsafe { std::slice::from_raw_parts(ptr.add(at), n) }
    };
    if read(0, 24) != BUNDLE_MAGIC {
        return None;
    }
    let count = u64::from_le_bytes(read(24, 8).try_into().ok()?);
    let mut at = 32;
    let mut end = at;
    for _ in 0..count.min(1024) {
        let head = read(at, 24);
        let offset = u64::from_le_bytes(head[0..8].try_into().ok()?);
        let size = u64::from_le_bytes(head[8..16].try_into().ok()?);
        let len = u64::from_le_bytes(head[16..24].try_into().ok()?);
        at += 24 + len as usize;
        end = end.max(at).max((offset + size) as usize);
    }
    Some(end)
}

/// The GPU target of a device triple (`gfx90a` from `…--gfx90a:xnack-`).
pub fn triple_arch(triple: &str) -> Option<&str> {
    if !triple.contains("amdgcn-amd-amdhsa") {
        return None;
    }
    let target = triple.rsplit("--").next()?;
    Some(target.split(':').next().unwrap_or(target))
}

/// The code object for `arch`, from a bundle or a bare ELF.
pub fn code_object_for<'a>(image: &'a [u8], arch: &str) -> Option<&'a [u8]> {
    if image.starts_with(b"\x7fELF") {
        return Some(image);
    }
    parse_bundle(image)
        .ok()?
        .into_iter()
        .find(|(t, _)| triple_arch(t) == Some(arch))
        .map(|(_, d)| d)
}

/// Device architectures present in an image.
pub fn archs(image: &[u8]) -> Vec<String> {
    parse_bundle(image)
        .map(|e| {
            e.iter()
                .filter_map(|(t, _)| triple_arch(t).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The raw msgpack of the `NT_AMDGPU_METADATA` note.
pub fn metadata_note(elf: &[u8]) -> Result<Vec<u8>, String> {
    let file =
        ElfFile64::<Endianness>::parse(elf).map_err(|e| format!("not an ELF code object: {e}"))?;
    let endian = file.endian();
    let header = file.elf_header();
    let sections = header.sections(endian, elf).map_err(|e| e.to_string())?;
    for section in sections.iter() {
        let Ok(Some(mut notes)) = section.notes(endian, elf) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.name() == b"AMDGPU" && note.n_type(endian) == NT_AMDGPU_METADATA {
                return Ok(note.desc().to_vec());
            }
        }
    }
    Err("no NT_AMDGPU_METADATA note".into())
}

/// Kernels described by a code object's metadata note.
pub fn kernels(elf: &[u8]) -> Result<Vec<KernelMeta>, String> {
    let note = metadata_note(elf)?;
    let value = rmpv::decode::read_value(&mut note.as_slice())
        .map_err(|e| format!("bad metadata msgpack: {e}"))?;
    let get = |map: &rmpv::Value, key: &str| -> Option<rmpv::Value> {
        map.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v.clone())
    };
    let num =
        |map: &rmpv::Value, key: &str| get(map, key).and_then(|v| v.as_u64()).unwrap_or(0) as u32;
    let text = |map: &rmpv::Value, key: &str| {
        get(map, key)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let list = get(&value, "amdhsa.kernels").ok_or("metadata has no amdhsa.kernels")?;
    let list = list.as_array().ok_or("amdhsa.kernels is not a list")?;
    Ok(list
        .iter()
        .map(|k| KernelMeta {
            name: text(k, ".name"),
            symbol: text(k, ".symbol"),
            kernarg_size: num(k, ".kernarg_segment_size"),
            kernarg_align: num(k, ".kernarg_segment_align"),
            args: get(k, ".args")
                .and_then(|a| a.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .map(|a| Arg {
                    offset: num(a, ".offset"),
                    size: num(a, ".size"),
                    value_kind: text(a, ".value_kind"),
                })
                .collect(),
            group_segment_fixed_size: num(k, ".group_segment_fixed_size"),
            private_segment_fixed_size: num(k, ".private_segment_fixed_size"),
            sgpr_count: num(k, ".sgpr_count"),
            vgpr_count: num(k, ".vgpr_count"),
            wavefront_size: num(k, ".wavefront_size"),
            max_flat_workgroup_size: num(k, ".max_flat_workgroup_size"),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut head = BUNDLE_MAGIC.to_vec();
        head.extend((entries.len() as u64).to_le_bytes());
        let header_len: usize = 32 + entries.iter().map(|(t, _)| 24 + t.len()).sum::<usize>();
        let mut offset = header_len as u64;
        let mut body: Vec<u8> = Vec::new();
        for (t, d) in entries {
            head.extend(offset.to_le_bytes());
            head.extend((d.len() as u64).to_le_bytes());
            head.extend((t.len() as u64).to_le_bytes());
            head.extend(t.as_bytes());
            body.extend(*d);
            offset += d.len() as u64;
        }
        head.extend(body);
        head
    }

    #[test]
    fn bundle_round_trip_and_arch_pick() {
        let b = bundle(&[
            ("host-x86_64-unknown-linux", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", b"\x7fELFabc"),
        ]);
        let entries = parse_bundle(&b).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].1, b"\x7fELFabc");
        assert_eq!(code_object_for(&b, "gfx90a"), Some(&b"\x7fELFabc"[..]));
        assert_eq!(code_object_for(&b, "gfx942"), None);
        assert_eq!(archs(&b), vec!["gfx90a".to_string()]);
        // SAFETY: `b` is a complete bundle.
        assert_eq!(unsafe { bundle_len(b.as_ptr()) }, Some(b.len()));
    }

    #[test]
    fn truncated_bundles_are_errors() {
        let b = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"xyz")]);
        assert!(parse_bundle(&b[..b.len() - 1]).is_err());
        assert!(parse_bundle(b"nonsense").is_err());
        assert!(kernels(b"\x7fELF").is_err());
    }
}

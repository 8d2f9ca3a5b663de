//! The kernel descriptor behind a kernel symbol, and the register counts
//! and entry offset a kernel-symbol record reports from it.
//!
//! A kernel symbol's `kernel_object` (the handle an AQL dispatch packet
//! carries) is the device address of the kernel's 64-byte AMDHSA kernel
//! descriptor; the loader extension's `query_host_address` gives the host
//! copy. Its layout (code object v3 and later, little endian):
//!
//! | bytes | field |
//! |---|---|
//! | 16..24 | `kernel_code_entry_byte_offset` (i64, from the descriptor) |
//! | 44..48 | `compute_pgm_rsrc3` (gfx90a/gfx94x: `ACCUM_OFFSET`, bits 0–5) |
//! | 48..52 | `compute_pgm_rsrc1` (`GRANULATED_WORKITEM_VGPR_COUNT` bits 0–5, `GRANULATED_WAVEFRONT_SGPR_COUNT` bits 6–9) |
//! | 56..58 | `kernel_code_properties` (`ENABLE_WAVEFRONT_SIZE32`, bit 10) |
//!
//! The counts are the allocation granules the hardware reserves, decoded the
//! way the ROCm profilers decode them, so they match rocprofv3's
//! `VGPR_Count`, `Accum_VGPR_Count` and `SGPR_Count` columns:
//!
//! - architectural VGPRs: gfx90a and gfx94x `(ACCUM_OFFSET + 1) · 4`; others
//!   `(GRANULATED_WORKITEM_VGPR_COUNT + 1) · (wave32 ? 8 : 4)`;
//! - accumulation VGPRs: gfx908 the same as the architectural count (its
//!   AGPR file mirrors the VGPR allocation); gfx90a and gfx94x
//!   `(GRANULATED_WORKITEM_VGPR_COUNT + 1) · 8 − architectural`; others 0;
//! - SGPRs: gfx10 and later always 128; earlier
//!   `(GRANULATED_WAVEFRONT_SGPR_COUNT / 2 + 1) · 16`.

/// Register counts of one kernel, as a kernel-symbol record carries them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegisterCounts {
    /// Architectural VGPRs per work-item (`arch_vgpr_count`, rocprofv3's
    /// `VGPR_Count`).
    pub arch_vgpr: u32,
    /// Accumulation VGPRs (AGPRs) per work-item (`accum_vgpr_count`,
    /// `Accum_VGPR_Count`); 0 on targets without them.
    pub accum_vgpr: u32,
    /// SGPRs per wavefront (`sgpr_count`, `SGPR_Count`).
    pub sgpr: u32,
}

/// A kernel descriptor's bytes.
#[derive(Clone, Copy)]
pub struct KernelDescriptor([u8; 64]);

impl KernelDescriptor {
    /// The descriptor from its 64 bytes (the host copy at the address
    /// `query_host_address` returns for the symbol's `kernel_object`).
    pub fn from_bytes(bytes: [u8; 64]) -> KernelDescriptor {
        KernelDescriptor(bytes)
    }

    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.0[at..at + 4].try_into().expect("4 bytes"))
    }

    /// Byte offset from the descriptor to the kernel's first instruction.
    pub fn kernel_code_entry_byte_offset(&self) -> i64 {
        i64::from_le_bytes(self.0[16..24].try_into().expect("8 bytes"))
    }

    /// The counts for a kernel on the agent named `gfx` (`gfx90a`, `gfx1030`, …).
    pub fn register_counts(&self, gfx: &str) -> RegisterCounts {
        let rsrc3 = self.u32_at(44);
        let rsrc1 = self.u32_at(48);
        let properties = u16::from_le_bytes([self.0[56], self.0[57]]);
        let vgpr_granules = (rsrc1 & 0x3f) + 1;
        let sgpr_granules = (rsrc1 >> 6) & 0xf;
        let wave32 = properties & (1 << 10) != 0;
        let target = Target::of(gfx);
        let arch_vgpr = if target.unified_vgprs {
            ((rsrc3 & 0x3f) + 1) * 4
        } else {
            vgpr_granules * if wave32 { 8 } else { 4 }
        };
        let accum_vgpr = match target {
            Target {
                mirrored_agprs: true,
                ..
            } => arch_vgpr,
            Target {
                unified_vgprs: true,
                ..
            } => (vgpr_granules * 8).saturating_sub(arch_vgpr),
            _ => 0,
        };
        let sgpr = match target.major {
            Some(major) if major >= 10 => 128,
            Some(_) => (sgpr_granules / 2 + 1) * 16,
            None => 0,
        };
        RegisterCounts {
            arch_vgpr,
            accum_vgpr,
            sgpr,
        }
    }
}

/// What the counts depend on in a target name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Target {
    /// The GFX major version: `gfx90a` → 9, `gfx1030` → 10.
    major: Option<u32>,
    /// gfx90a and gfx94x: architectural and accumulation VGPRs share one
    /// file split at `ACCUM_OFFSET`.
    unified_vgprs: bool,
    /// gfx908: a separate AGPR file sized like the VGPR allocation.
    mirrored_agprs: bool,
}

impl Target {
    fn of(name: &str) -> Target {
        // Agent names are bare (`gfx90a`); ISA names add features after ':'.
        let name = name.split(':').next().unwrap_or(name);
        let digits = name.strip_prefix("gfx").unwrap_or("");
        // The last two characters are the minor version and stepping.
        let major = digits
            .get(..digits.len().saturating_sub(2))
            .filter(|m| !m.is_empty())
            .and_then(|m| m.parse().ok());
        Target {
            major,
            unified_vgprs: name == "gfx90a" || name.starts_with("gfx94"),
            mirrored_agprs: name == "gfx908",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(rsrc1: u32, rsrc3: u32, properties: u16, entry: i64) -> KernelDescriptor {
        let mut b = [0u8; 64];
        b[16..24].copy_from_slice(&entry.to_le_bytes());
        b[44..48].copy_from_slice(&rsrc3.to_le_bytes());
        b[48..52].copy_from_slice(&rsrc1.to_le_bytes());
        b[56..58].copy_from_slice(&properties.to_le_bytes());
        KernelDescriptor::from_bytes(b)
    }

    #[test]
    fn target_names_give_their_major_version() {
        assert_eq!(Target::of("gfx90a").major, Some(9));
        assert_eq!(Target::of("gfx942").major, Some(9));
        assert_eq!(Target::of("gfx1030").major, Some(10));
        assert_eq!(Target::of("gfx1100").major, Some(11));
        assert_eq!(Target::of("gfx90a:sramecc+:xnack-"), Target::of("gfx90a"));
        assert_eq!(Target::of("AMD EPYC 7763").major, None);
    }

    /// The descriptors of the two kernels in the simulated runtime's sample
    /// code object (hipcc, gfx90a); their metadata says `.vgpr_count` 8 and
    /// 3, `.agpr_count` 0, `.sgpr_count` 11.
    #[test]
    fn gfx90a_counts_come_from_accum_offset_and_the_granules() {
        let vector_add = descriptor(0x00af_0040, 0x1, 0xb, 4480);
        let fill = descriptor(0x00af_0040, 0x0, 0xb, 4672);
        assert_eq!(
            vector_add.register_counts("gfx90a"),
            RegisterCounts {
                arch_vgpr: 8,
                accum_vgpr: 0,
                sgpr: 16
            }
        );
        assert_eq!(
            fill.register_counts("gfx90a"),
            RegisterCounts {
                arch_vgpr: 4,
                accum_vgpr: 4,
                sgpr: 16
            }
        );
        assert_eq!(vector_add.kernel_code_entry_byte_offset(), 4480);
    }

    #[test]
    fn other_targets_use_their_granules_and_wave_size() {
        // 3 VGPR granules, 5 SGPR granules.
        let kd = descriptor(2 | 5 << 6, 0, 0, 0);
        let wave32 = descriptor(2 | 5 << 6, 0, 1 << 10, 0);
        assert_eq!(
            kd.register_counts("gfx906"),
            RegisterCounts {
                arch_vgpr: 12,
                accum_vgpr: 0,
                sgpr: 48
            }
        );
        assert_eq!(
            kd.register_counts("gfx908"),
            RegisterCounts {
                arch_vgpr: 12,
                accum_vgpr: 12,
                sgpr: 48
            }
        );
        assert_eq!(
            wave32.register_counts("gfx1030"),
            RegisterCounts {
                arch_vgpr: 24,
                accum_vgpr: 0,
                sgpr: 128
            }
        );
    }
}

//! The real runtime's transfer settings for copies of pageable memory and
//! how a copy is cut into staged or pinned pieces ([`Transfer::plan`]);
//! `sim/README.md`, "Copies of pageable memory", has the rules.
//!
//! Plain data and arithmetic: uses no other module of the crate. `memory`
//! plans copies with it; `stream` sizes its staging buffer with it.

use std::sync::OnceLock;

/// The real runtime's transfer settings for copies of pageable memory
/// (`sim/README.md`, "Copies of pageable memory"), read once from the same
/// environment variables.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    /// Bytes of one staging slot, and the most one staged copy moves.
    pub stage: usize,
    /// Copies of more bytes than this pin the pageable memory in place
    /// instead of staging it.
    pub pin_min: usize,
    /// The most bytes pinned (and copied) at once.
    pub pin_chunk: usize,
}

const MIB: usize = 1 << 20;
/// The page size pinning works in.
const PIN_ALIGN: usize = 4096;

impl Transfer {
    /// The settings for `GPU_STAGING_BUFFER_SIZE` and
    /// `GPU_PINNED_MIN_XFER_SIZE` (MiB, `None`: unset).
    pub fn from_flags(staging_mib: Option<usize>, pinned_min_mib: Option<usize>) -> Transfer {
        let pin_chunk = pinned_min_mib.unwrap_or(128) * MIB;
        let pin_min = pinned_min_mib.unwrap_or(1) * MIB;
        let stage = staging_mib.unwrap_or(1) * MIB;
        Transfer {
            stage: stage.max(pin_min + 4096),
            pin_min,
            pin_chunk: pin_chunk.max(pin_min),
        }
    }

    fn from_env() -> Transfer {
        let mib = |name: &str| {
            let value = std::env::var(name).ok()?;
            match value.trim().parse::<usize>() {
                Ok(v) if v <= 1 << 20 => Some(v),
                _ => {
                    eprintln!("sim-hip: ignoring {name}={value:?} (not a number of MiB)");
                    None
                }
            }
        };
        Transfer::from_flags(
            mib("GPU_STAGING_BUFFER_SIZE"),
            mib("GPU_PINNED_MIN_XFER_SIZE"),
        )
    }

    /// How a copy of `size` bytes between device memory and pageable memory
    /// at `host` is done: `(offset, length, staged)` pieces in order.
    pub fn plan(&self, host: usize, size: usize) -> Vec<(usize, usize, bool)> {
        let mut pieces = Vec::new();
        if size > self.pin_min && size <= self.pin_chunk {
            // Pinned in place at once: one copy.
            pieces.push((0, size, false));
            return pieces;
        }
        let mut offset = 0;
        let pin = self.pin_chunk.min(size);
        if pin > 0 && size > self.pin_min {
            // Pinned a chunk at a time; the first chunk ends on a page
            // boundary of the host memory.
            let partial = host % PIN_ALIGN;
            let first = (pin + partial).div_ceil(PIN_ALIGN) * PIN_ALIGN - partial;
            let mut chunk = first;
            while offset < size {
                let len = chunk.min(size - offset);
                pieces.push((offset, len, false));
                offset += len;
                chunk = pin;
            }
        }
        while offset < size {
            let len = self.stage.min(size - offset);
            pieces.push((offset, len, true));
            offset += len;
        }
        pieces
    }
}

pub fn transfer() -> &'static Transfer {
    static T: OnceLock<Transfer> = OnceLock::new();
    T.get_or_init(Transfer::from_env)
}

#[cfg(test)]
mod tests {
    use super::Transfer;

    const MIB: usize = 1 << 20;

    #[test]
    fn default_settings_are_the_real_runtimes() {
        let t = Transfer::from_flags(None, None);
        assert_eq!(
            (t.stage, t.pin_min, t.pin_chunk),
            (MIB + 4096, MIB, 128 * MIB)
        );
        // Up to 1 MiB: one staged copy; up to 128 MiB: one pinned copy.
        assert_eq!(t.plan(16, MIB), vec![(0, MIB, true)]);
        assert_eq!(t.plan(16, MIB + 1), vec![(0, MIB + 1, false)]);
        assert_eq!(t.plan(16, 128 * MIB), vec![(0, 128 * MIB, false)]);
        // Beyond: 128 MiB chunks, the first ending on a page boundary.
        let size = 300 * MIB;
        let first = 128 * MIB + 4096 - 16;
        assert_eq!(
            t.plan(0x7000_0010, size),
            vec![
                (0, first, false),
                (first, 128 * MIB, false),
                (first + 128 * MIB, size - first - 128 * MIB, false)
            ]
        );
        assert_eq!(t.plan(0x7000_0000, 256 * MIB).len(), 2);
    }

    #[test]
    fn pinning_off_stages_in_chunks() {
        let t = Transfer::from_flags(Some(2), Some(0));
        assert_eq!((t.stage, t.pin_min, t.pin_chunk), (2 * MIB, 0, 0));
        let plan = t.plan(16, 5 * MIB + 3);
        assert_eq!(
            plan,
            vec![
                (0, 2 * MIB, true),
                (2 * MIB, 2 * MIB, true),
                (4 * MIB, MIB + 3, true)
            ]
        );
        // The staging size never drops below the pinning threshold + 4 KiB.
        let t = Transfer::from_flags(Some(1), Some(4));
        assert_eq!(
            (t.stage, t.pin_min, t.pin_chunk),
            (4 * MIB + 4096, 4 * MIB, 4 * MIB)
        );
        assert_eq!(t.plan(0, 4 * MIB), vec![(0, 4 * MIB, true)]);
        assert_eq!(t.plan(0, 9 * MIB).len(), 3);
    }
}

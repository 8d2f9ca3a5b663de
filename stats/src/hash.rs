//! A fast hash for the small keys statistics are kept by.

use std::hash::{BuildHasherDefault, Hasher};

/// A fast, non-cryptographic hash for small keys (ids, kind/operation
/// pairs): one rotate, xor and multiply per word, as in Firefox's and rustc's
/// FxHash. The std default (SipHash) resists hash flooding, which costs
/// ~10× more per lookup; the keys here come from the profiler, not from an
/// adversary.
#[derive(Debug, Clone, Copy, Default)]
pub struct FastHasher(u64);

/// [`FastHasher`] as a `HashMap`'s `S` parameter.
pub type FastHash = BuildHasherDefault<FastHasher>;

impl FastHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        for &b in chunks.remainder() {
            self.mix(b as u64);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }
}

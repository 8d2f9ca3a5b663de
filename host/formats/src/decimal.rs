//! Unsigned integers in decimal, appended to a byte buffer: the numbers of
//! the CSV and JSON writers, where they are most of the bytes.

/// "00" to "99": the two digits of every number below 100.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `n` in decimal.
///
/// Why not `itoa` (which the other writers use): it writes into a buffer of
/// its own, right-aligned, and copying its variable-length result into the
/// output is a `memcpy` call, an eighth of the CSV writer's profile (about
/// 20 numbers a row); and it divides the whole number again for each
/// group of digits, a chain of dependent multiplications as long as a
/// timestamp (19 digits, two a row). This counts the digits first, appends a
/// constant-size block (inlined stores), splits the number into parts below
/// 10^8 whose digits are independent of each other, and cuts the block to
/// length.
///
/// Numbers below 100 (most of a row's fields: agents, sizes, counts) take a
/// short path inlined into the writer; the rest a call.
#[inline]
pub(crate) fn decimal(buf: &mut Vec<u8>, n: u64) {
    if n < 10 {
        buf.push(b'0' + n as u8);
    } else if n < 100 {
        let pair = n as usize * 2;
        buf.extend_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        long(buf, n);
    }
}

/// [`decimal`] of a number of three digits or more.
#[inline(never)]
fn long(buf: &mut Vec<u8>, n: u64) {
    const E8: u64 = 100_000_000;
    let len = n.checked_ilog10().map_or(1, |l| l as usize + 1);
    let start = buf.len();
    buf.extend_from_slice(&[b'0'; 20]);
    let digits = &mut buf[start..start + len];
    if n < E8 {
        leading(digits, n as u32);
    } else if n < E8 * E8 {
        leading(&mut digits[..len - 8], (n / E8) as u32);
        eight(&mut digits[len - 8..], (n % E8) as u32);
    } else {
        leading(&mut digits[..len - 16], (n / (E8 * E8)) as u32);
        eight(&mut digits[len - 16..len - 8], (n / E8 % E8) as u32);
        eight(&mut digits[len - 8..], (n % E8) as u32);
    }
    buf.truncate(start + len);
}

/// Writes `n` (below 10^8) into exactly `out.len()` digits, its own count.
fn leading(out: &mut [u8], mut n: u32) {
    let mut end = out.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        out[end - 2..end].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        end -= 2;
    }
    if n >= 10 {
        let pair = n as usize * 2;
        out[..2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        out[0] = b'0' + n as u8;
    }
}

/// Writes `n` (below 10^8) as exactly eight digits, leading zeros included.
fn eight(out: &mut [u8], n: u32) {
    let (hi, lo) = (n / 10_000, n % 10_000);
    for (i, pair) in [hi / 100, hi % 100, lo / 100, lo % 100]
        .into_iter()
        .enumerate()
    {
        let pair = pair as usize * 2;
        out[i * 2..i * 2 + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_writes_every_digit_count_like_display() {
        let mut samples = vec![0u64, u64::MAX];
        let mut p = 1u64;
        for _ in 0..20 {
            samples.extend([p - 1, p, p + 1, p.saturating_mul(7) / 3]);
            p = p.saturating_mul(10);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            samples.push(x >> (x % 64));
        }
        let mut buf = b"prefix".to_vec();
        for n in samples {
            buf.truncate(6);
            decimal(&mut buf, n);
            assert_eq!(std::str::from_utf8(&buf[6..]).unwrap(), n.to_string());
        }
    }
}

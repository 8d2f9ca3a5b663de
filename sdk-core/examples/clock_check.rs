//! Prints which source `clock::now()` settles on and how far it is from the
//! system clock: `cargo run -p rocwasm-core --example clock_check`.
use rocwasm_core::clock;

fn main() {
    let until = clock::system_now() + 100_000_000;
    let mut worst = 0i64;
    let mut reads = 0u64;
    while clock::system_now() < until {
        let before = clock::system_now();
        let t = clock::now() as i64;
        let after = clock::system_now() as i64;
        let off = if t < before as i64 {
            t - before as i64
        } else if t > after {
            t - after
        } else {
            0
        };
        if off.abs() > worst.abs() {
            worst = off;
        }
        reads += 1;
    }
    println!("source {:?} after 100 ms, {reads} reads, worst offset outside the system-clock bracket {worst} ns", clock::source());
}

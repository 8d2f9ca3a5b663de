//! `ROCWASM_CLOCK=os` makes every timestamp a `CLOCK_BOOTTIME` read, for a
//! machine whose counter the user does not trust. The choice is made once
//! per process, so the test re-runs itself with the variable set.

use std::process::Command;

use rocwasm_core::clock::{self, Source};

const CHILD: &str = "ROCWASM_CLOCK_TEST_CHILD";

#[test]
fn rocwasm_clock_os_forces_the_system_clock() {
    if std::env::var_os(CHILD).is_some() {
        // Past the first fit (5 ms): a counter would be in use by now.
        let until = clock::system_now() + 20_000_000;
        let mut last = 0;
        while clock::system_now() < until {
            let before = clock::system_now();
            let t = clock::now();
            let after = clock::system_now();
            assert!(
                before <= t && t <= after && t >= last,
                "{before} {t} {after}"
            );
            last = t;
        }
        assert_eq!(clock::source(), Source::System);
        return;
    }
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &this_test()])
        .env("ROCWASM_CLOCK", "os")
        .env(CHILD, "1")
        .status()
        .unwrap();
    assert!(status.success(), "the child run failed: {status}");
}

/// This test's name as the harness knows it (`<module>::<fn>`, without the
/// binary's crate name).
fn this_test() -> String {
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    format!("{module}::rocwasm_clock_os_forces_the_system_clock")
}

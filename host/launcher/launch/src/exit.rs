//! How a process ended, in words and as the status a shell would give.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// How a process ended, as a sentence's end: "exited with status 0",
/// "was ended by signal 9 (SIGKILL)".
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!(
            "was ended by signal {sig}{}{}",
            signal_name(sig).map_or(String::new(), |n| format!(" ({n})")),
            if status.core_dumped() {
                ", core dumped"
            } else {
                ""
            }
        ),
        _ => "ended".into(),
    }
}

/// The status a shell reports for a process that ended so: its code, or
/// 128 + the signal that ended it.
pub fn shell_status(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    }
}

/// The usual name of signal `sig` on Linux (the standard library has no
/// table of them).
fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_and_signals_in_words_and_as_shell_statuses() {
        // A wait status: the code in the second byte, or the signal in the
        // low seven bits (0x80: core dumped).
        let exited = ExitStatus::from_raw(3 << 8);
        assert_eq!(describe_exit(exited), "exited with status 3");
        assert_eq!(shell_status(exited), 3);
        let killed = ExitStatus::from_raw(9);
        assert_eq!(describe_exit(killed), "was ended by signal 9 (SIGKILL)");
        assert_eq!(shell_status(killed), 137);
        let dumped = ExitStatus::from_raw(11 | 0x80);
        assert_eq!(
            describe_exit(dumped),
            "was ended by signal 11 (SIGSEGV), core dumped"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(40)),
            "was ended by signal 40"
        );
    }
}

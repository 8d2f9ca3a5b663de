//! A guest's text in the host's log, rate-limited: the token bucket
//! ([`LogGate`]) of the `log` interface, and [`GuestOutput`], the WASI
//! stdout and stderr of a guest that imports WASI.
//!
//! A WASI guest (componentize-py, componentize-js, C with wasi-libc) prints
//! its errors, tracebacks and debugging output to stderr and stdout. Those
//! bytes are cut into lines and logged as `[stage] line`: stderr at `warn`
//! (shown by default), stdout at `info` (`-v`). Both streams of a plugin
//! share one budget of [`Limits::log_per_second`](crate::Limits) lines a
//! second (apart from the `log` interface's own); lines beyond it are
//! dropped and counted, and the count is logged with the next line let
//! through (or when the instance goes). A line is at most [`MAX_LINE`]
//! bytes: a longer one is cut into pieces, so a guest that never writes a
//! newline holds at most that much host memory per stream.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Instant;

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// The longest line logged, in bytes; longer output is cut into lines of
/// this size.
pub(crate) const MAX_LINE: usize = 4096;

/// How much a guest may write in one go (`check-write`); any amount is
/// taken at once.
const WRITE_BUDGET: usize = 1 << 20;

/// A token bucket: `rate` messages per second, bursts up to `rate`. A noisy
/// plugin must not flood the host's log (or slow the run by logging).
#[derive(Debug)]
pub(crate) struct LogGate {
    rate: f64,
    tokens: f64,
    last: Instant,
    dropped: u64,
}

impl LogGate {
    /// At most `per_second` messages a second (at least 1), bursts of as many.
    pub fn new(per_second: u32) -> Self {
        let rate = per_second.max(1) as f64;
        LogGate {
            rate,
            tokens: rate,
            last: Instant::now(),
            dropped: 0,
        }
    }

    /// `Some(dropped since the last admitted message)` if this one may be
    /// logged, `None` if it is dropped.
    pub fn admit(&mut self) -> Option<u64> {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(self.rate);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Some(std::mem::take(&mut self.dropped))
        } else {
            self.dropped += 1;
            None
        }
    }

    /// Messages dropped and not yet mentioned; mentioning them is up to the
    /// caller (the count restarts from zero).
    pub fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.dropped)
    }
}

/// Which of the guest's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// `wasi:cli/stdout`: logged at `info`.
    Stdout,
    /// `wasi:cli/stderr`: logged at `warn`.
    Stderr,
}

/// Where finished log lines go: the host's log, or a test's list.
pub(crate) type Sink = Box<dyn FnMut(Stream, String) + Send>;

/// The guest's stdout or stderr, as lines in the host's log. Clones write
/// to the same place (WASI asks for a fresh handle at every `get-stdout`).
#[derive(Clone)]
pub(crate) struct GuestOutput {
    lines: Arc<Mutex<Lines>>,
    stream: Stream,
}

impl GuestOutput {
    /// Stdout and stderr of stage `stage`, logged through `tracing` at most
    /// `per_second` lines a second together.
    pub fn pair(stage: &str, per_second: u32) -> (GuestOutput, GuestOutput) {
        Self::pair_to(stage, per_second, Box::new(to_tracing))
    }

    /// As [`Self::pair`], lines going to `sink`.
    pub fn pair_to(stage: &str, per_second: u32, sink: Sink) -> (GuestOutput, GuestOutput) {
        let lines = Arc::new(Mutex::new(Lines {
            stage: stage.into(),
            gate: LogGate::new(per_second),
            stdout: Vec::new(),
            stderr: Vec::new(),
            sink,
        }));
        (
            GuestOutput {
                lines: lines.clone(),
                stream: Stream::Stdout,
            },
            GuestOutput {
                lines,
                stream: Stream::Stderr,
            },
        )
    }

    /// Takes bytes the guest wrote.
    fn take(&self, bytes: &[u8]) {
        self.lock().write(self.stream, bytes);
    }

    fn lock(&self) -> MutexGuard<'_, Lines> {
        // A panicking sink cannot leave the line buffers inconsistent.
        self.lines.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The line buffers of one plugin's two streams, and their shared budget.
struct Lines {
    stage: Box<str>,
    gate: LogGate,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    sink: Sink,
}

impl Lines {
    /// Appends `bytes` to `stream`'s partial line and logs every line it completes.
    fn write(&mut self, stream: Stream, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let buf = self.buffer(stream);
            let room = MAX_LINE - buf.len();
            match bytes[..bytes.len().min(room)]
                .iter()
                .position(|b| *b == b'\n')
            {
                Some(nl) => {
                    buf.extend_from_slice(&bytes[..nl]);
                    bytes = &bytes[nl + 1..];
                }
                None if bytes.len() < room => {
                    buf.extend_from_slice(bytes);
                    return;
                }
                // No newline within a line's length: cut here.
                None => {
                    buf.extend_from_slice(&bytes[..room]);
                    bytes = &bytes[room..];
                    // A newline right at the cut ends this line, not another.
                    if let Some(rest) = bytes.strip_prefix(b"\n") {
                        bytes = rest;
                    }
                }
            }
            self.end_line(stream);
        }
    }

    fn buffer(&mut self, stream: Stream) -> &mut Vec<u8> {
        match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        }
    }

    /// Logs `stream`'s buffered line (if the budget allows) and empties it.
    fn end_line(&mut self, stream: Stream) {
        let raw = std::mem::take(self.buffer(stream));
        let Some(dropped) = self.gate.admit() else {
            return;
        };
        self.report_dropped(dropped);
        let text = String::from_utf8_lossy(&raw);
        let line = text.strip_suffix('\r').unwrap_or(&text);
        (self.sink)(stream, format!("[{}] {line}", self.stage));
    }

    fn report_dropped(&mut self, dropped: u64) {
        if dropped > 0 {
            let text = format!(
                "[{}] {dropped} line(s) of output dropped (rate limit)",
                self.stage
            );
            (self.sink)(Stream::Stderr, text);
        }
    }
}

/// The instance is gone: its unfinished lines are logged, then what was dropped.
impl Drop for Lines {
    fn drop(&mut self) {
        for stream in [Stream::Stdout, Stream::Stderr] {
            if !self.buffer(stream).is_empty() {
                self.end_line(stream);
            }
        }
        let dropped = self.gate.take_dropped();
        self.report_dropped(dropped);
    }
}

fn to_tracing(stream: Stream, line: String) {
    match stream {
        Stream::Stdout => tracing::info!("{line}"),
        Stream::Stderr => tracing::warn!("{line}"),
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// WASIp2 `output-stream`: always ready, every write taken at once.
impl OutputStream for GuestOutput {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.take(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_BUDGET)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for GuestOutput {
    async fn ready(&mut self) {}
}

/// The same for WASIp3 guests.
impl tokio::io::AsyncWrite for GuestOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.take(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Logged = Arc<Mutex<Vec<(Stream, String)>>>;

    fn pair(per_second: u32) -> (GuestOutput, GuestOutput, Logged) {
        let logged = Logged::default();
        let l = logged.clone();
        let sink: Sink = Box::new(move |s, line| l.lock().unwrap().push((s, line)));
        let (out, err) = GuestOutput::pair_to("py", per_second, sink);
        (out, err, logged)
    }

    fn lines(logged: &Logged) -> Vec<(Stream, String)> {
        logged.lock().unwrap().clone()
    }

    #[test]
    fn log_gate_drops_beyond_the_burst_and_counts() {
        let mut g = LogGate::new(3);
        let admitted = (0..10).filter(|_| g.admit().is_some()).count();
        // The burst is 3; at most one more token can trickle in meanwhile.
        assert!((3..=4).contains(&admitted), "{admitted}");
        assert_eq!(g.take_dropped() as usize, 10 - admitted);
        assert_eq!(g.take_dropped(), 0);
    }

    #[test]
    fn lines_are_split_across_writes_per_stream_and_prefixed_with_the_stage() {
        let (out, err, logged) = pair(100);
        out.take(b"hello ");
        err.take(b"Traceback:\r\n  File \"x\"");
        out.take(b"world\nsecond\n");
        assert_eq!(
            lines(&logged),
            vec![
                (Stream::Stderr, "[py] Traceback:".to_string()),
                (Stream::Stdout, "[py] hello world".to_string()),
                (Stream::Stdout, "[py] second".to_string()),
            ]
        );
        // The unfinished stderr line is logged when the instance goes.
        drop((out, err));
        assert_eq!(
            lines(&logged).last().unwrap(),
            &(Stream::Stderr, "[py]   File \"x\"".to_string())
        );
    }

    #[test]
    fn a_line_without_newline_is_cut_at_max_line() {
        let (out, _err, logged) = pair(100);
        out.take(&vec![b'a'; MAX_LINE * 2 + 10]);
        let got = lines(&logged);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|(_, l)| l.len() == "[py] ".len() + MAX_LINE));
        drop(out);
        drop(_err);
        assert_eq!(lines(&logged)[2].1, format!("[py] {}", "a".repeat(10)));
    }

    #[test]
    fn lines_beyond_the_rate_are_dropped_and_counted() {
        let (out, err, logged) = pair(3);
        for i in 0..10 {
            out.take(format!("line {i}\n").as_bytes());
        }
        let admitted = lines(&logged).len();
        assert!((3..=4).contains(&admitted), "{admitted}");
        drop((out, err));
        let got = lines(&logged);
        assert_eq!(got.len(), admitted + 1);
        assert_eq!(
            got.last().unwrap(),
            &(
                Stream::Stderr,
                format!(
                    "[py] {} line(s) of output dropped (rate limit)",
                    10 - admitted
                )
            )
        );
    }

    #[test]
    fn the_wasi_streams_write_into_the_same_lines() {
        let (out, _err, logged) = pair(100);
        let mut a = out.p2_stream();
        let mut b = out.p2_stream();
        assert!(a.check_write().unwrap() > 0);
        a.write(bytes::Bytes::from_static(b"one ")).unwrap();
        b.write(bytes::Bytes::from_static(b"line\n")).unwrap();
        a.flush().unwrap();
        assert_eq!(
            lines(&logged),
            vec![(Stream::Stdout, "[py] one line".to_string())]
        );
    }
}

//! Logging through the host, with `format!`-style macros.
//!
//! ```no_run
//! rocwasm_plugin_sdk::info!("saw {} kernels", 3);
//! rocwasm_plugin_sdk::warn!("config key `{}` ignored", "x");
//! ```
//!
//! Inside a component the message goes to the host's log (tagged with the
//! stage name there). Compiled natively — in a plugin's unit tests — it goes
//! to standard error instead, so pure code may log and still be tested.

pub use crate::types::LogLevel as Level;

/// Logs `message` at `level`.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::rocwasm::plugin::log::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {message}");
}

#[doc(hidden)]
#[macro_export]
macro_rules! __log {
    ($level:ident, $($arg:tt)+) => {
        $crate::log::log($crate::log::Level::$level, &::std::format!($($arg)+))
    };
}

/// Logs at trace level.
#[macro_export]
macro_rules! trace { ($($arg:tt)+) => { $crate::__log!(Trace, $($arg)+) }; }
/// Logs at debug level.
#[macro_export]
macro_rules! debug { ($($arg:tt)+) => { $crate::__log!(Debug, $($arg)+) }; }
/// Logs at info level.
#[macro_export]
macro_rules! info { ($($arg:tt)+) => { $crate::__log!(Info, $($arg)+) }; }
/// Logs at warn level.
#[macro_export]
macro_rules! warn { ($($arg:tt)+) => { $crate::__log!(Warn, $($arg)+) }; }
/// Logs at error level.
#[macro_export]
macro_rules! error { ($($arg:tt)+) => { $crate::__log!(Error, $($arg)+) }; }

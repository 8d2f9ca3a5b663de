//! The stage's `config` table from the chain file.
//!
//! The host flattens it to strings: nested keys are joined with `.`
//! (`[stage.config.ranges] init = 7` arrives as `ranges.init = "7"`), arrays
//! arrive as JSON. These helpers parse values and produce errors that name the
//! key, ready to return from `init`:
//!
//! ```no_run
//! use rocwasm_plugin_sdk::config;
//! # fn init() -> Result<(), String> {
//! let threshold: u64 = config::get_or("threshold", 1000).map_err(|e| e.to_string())?;
//! let pattern: Option<String> = config::get("pattern");
//! # Ok(()) }
//! ```

use std::fmt;
use std::str::FromStr;

use crate::bindings::rocwasm::plugin::config as host;

/// A config value that does not parse as the type the plugin needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub value: String,
    pub expected: &'static str,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "config key `{}`: cannot read `{}` as {}: {}",
            self.key, self.value, self.expected, self.reason
        )
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigError> for String {
    fn from(e: ConfigError) -> String {
        e.to_string()
    }
}

/// The raw value of `key`, if the stage's config has it.
pub fn get(key: &str) -> Option<String> {
    host::get(key)
}

/// Every `(key, value)` pair.
pub fn entries() -> Vec<(String, String)> {
    host::entries()
}

/// `key` parsed as `T`; `Ok(None)` when absent.
pub fn get_parsed<T>(key: &str) -> Result<Option<T>, ConfigError>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    get(key).map(|raw| parse_value(key, &raw)).transpose()
}

/// `key` parsed as `T`, or `default` when absent.
pub fn get_or<T>(key: &str, default: T) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    Ok(get_parsed(key)?.unwrap_or(default))
}

/// `key` as a boolean (`true/false`, `yes/no`, `on/off`, `1/0`), or `default`.
pub fn get_bool(key: &str, default: bool) -> Result<bool, ConfigError> {
    match get(key) {
        None => Ok(default),
        Some(raw) => parse_bool(key, &raw),
    }
}

/// The entries under `prefix.`, with the prefix removed: for `ranges`,
/// `ranges.init = 7` gives `("init", "7")`. Sorted by key.
pub fn section(prefix: &str) -> Vec<(String, String)> {
    strip_section(entries(), prefix)
}

/// Parses one value; the error names the key. Surrounding whitespace and a
/// pair of double quotes (a TOML string rendered as JSON) are ignored.
pub fn parse_value<T>(key: &str, raw: &str) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    unquote(raw).parse::<T>().map_err(|e| ConfigError {
        key: key.to_string(),
        value: raw.to_string(),
        expected: std::any::type_name::<T>(),
        reason: e.to_string(),
    })
}

/// Parses a boolean the way [`get_bool`] does.
pub fn parse_bool(key: &str, raw: &str) -> Result<bool, ConfigError> {
    match unquote(raw).to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(ConfigError {
            key: key.to_string(),
            value: raw.to_string(),
            expected: "bool",
            reason: "expected true/false, yes/no, on/off or 1/0".to_string(),
        }),
    }
}

/// Keeps the entries under `prefix.` and strips it.
pub fn strip_section(entries: Vec<(String, String)>, prefix: &str) -> Vec<(String, String)> {
    let lead = format!("{prefix}.");
    let mut out: Vec<(String, String)> = entries
        .into_iter()
        .filter_map(|(k, v)| k.strip_prefix(&lead).map(|rest| (rest.to_string(), v)))
        .collect();
    out.sort();
    out
}

fn unquote(raw: &str) -> &str {
    let t = raw.trim();
    t.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_with_key_in_the_error() {
        assert_eq!(parse_value::<u64>("threshold", " 42 "), Ok(42));
        assert_eq!(
            parse_value::<String>("p", "\"quoted\""),
            Ok("quoted".to_string())
        );
        let err = parse_value::<u64>("threshold", "lots").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`threshold`") && text.contains("`lots`") && text.contains("u64"),
            "{text}"
        );
    }

    #[test]
    fn booleans_accept_common_spellings() {
        assert_eq!(parse_bool("k", "Yes"), Ok(true));
        assert_eq!(parse_bool("k", "0"), Ok(false));
        assert!(parse_bool("k", "maybe").is_err());
    }

    #[test]
    fn sections_strip_their_prefix() {
        let entries = vec![
            ("ranges.b".to_string(), "2".to_string()),
            ("ranges.a".to_string(), "1".to_string()),
            ("rangesx".to_string(), "9".to_string()),
            ("base".to_string(), "5".to_string()),
        ];
        assert_eq!(
            strip_section(entries, "ranges"),
            vec![("a".into(), "1".into()), ("b".into(), "2".into())]
        );
    }
}

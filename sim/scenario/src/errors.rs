//! Injected errors: "the N+1-th call of `api` fails with `error`".
//!
//! Each runtime resolves error names itself (HIP knows `hipErrorOutOfMemory`,
//! HSA knows `HSA_STATUS_ERROR_OUT_OF_RESOURCES`), so the injector takes a
//! resolver; numbers are accepted as they are.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;

/// One `[[errors]]` entry.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InjectedError {
    /// The API function, e.g. `hipMalloc`.
    pub api: String,
    /// How many calls succeed before the failures start.
    #[serde(default)]
    pub after: u64,
    /// How many calls fail (absent: every later call).
    pub count: Option<u64>,
    /// The error: a name the runtime knows, or a number.
    pub error: ErrorCode,
}

/// An error given by name or number.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum ErrorCode {
    Code(i64),
    Name(String),
}

/// Counts calls per API and answers whether this one must fail.
#[derive(Debug, Default)]
pub struct ErrorInjector {
    rules: Vec<(InjectedError, i64)>,
    calls: Mutex<HashMap<String, u64>>,
}

impl ErrorInjector {
    /// Keeps the rules whose error `resolve` (or a number) gives a code;
    /// returns the names it could not resolve so the caller can warn.
    pub fn new(
        rules: &[InjectedError],
        resolve: impl Fn(&str) -> Option<i64>,
    ) -> (Self, Vec<String>) {
        let mut unknown = Vec::new();
        let rules = rules
            .iter()
            .filter_map(|rule| {
                let code = match &rule.error {
                    ErrorCode::Code(c) => Some(*c),
                    ErrorCode::Name(n) => resolve(n),
                };
                if code.is_none() {
                    unknown.push(format!("{:?}", rule.error));
                }
                code.map(|c| (rule.clone(), c))
            })
            .collect();
        (
            Self {
                rules,
                calls: Mutex::new(HashMap::new()),
            },
            unknown,
        )
    }

    /// Counts one call of `api`; `Some(code)` when it must fail.
    pub fn check(&self, api: &str) -> Option<i64> {
        if !self.rules.iter().any(|(r, _)| r.api == api) {
            return None;
        }
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        let n = calls.entry(api.to_string()).or_insert(0);
        let index = *n;
        *n += 1;
        self.rules.iter().find_map(|(rule, code)| {
            let hit = rule.api == api
                && index >= rule.after
                && rule
                    .count
                    .is_none_or(|count| index < rule.after.saturating_add(count));
            hit.then_some(*code)
        })
    }
}

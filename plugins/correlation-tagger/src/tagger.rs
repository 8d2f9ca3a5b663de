//! Range stacks per thread and the value rule; no host calls.

use std::collections::{BTreeMap, HashMap};

use rocwasm_plugin_sdk::config::{parse_value, strip_section};
use rocwasm_plugin_sdk::types::{Argument, SummaryTable};

/// How a range name becomes a value (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagRule {
    pub base: u64,
    pub ranges: HashMap<String, u64>,
    /// The answer outside any range; `None` leaves the pushed value.
    pub default: Option<u64>,
}

impl Default for TagRule {
    fn default() -> Self {
        TagRule {
            base: 1000,
            ranges: HashMap::new(),
            default: None,
        }
    }
}

impl TagRule {
    /// Reads `base`, `default` and `ranges.*` from the flattened stage config.
    pub fn from_entries(entries: &[(String, String)]) -> Result<TagRule, String> {
        let mut rule = TagRule::default();
        for (key, value) in entries {
            match key.as_str() {
                "base" => rule.base = parse_value(key, value)?,
                "default" => {
                    let v = value.trim().trim_matches('"');
                    rule.default = if v.eq_ignore_ascii_case("none") {
                        None
                    } else {
                        Some(parse_value(key, v)?)
                    };
                }
                _ => {}
            }
        }
        for (name, value) in strip_section(entries.to_vec(), "ranges") {
            let parsed = parse_value(&format!("ranges.{name}"), &value)?;
            rule.ranges.insert(name, parsed);
        }
        Ok(rule)
    }
}

/// The name a `roctxRangePushA` call pushes: its `message` argument (else
/// the first), without the quotes a renderer may have put around it.
pub fn range_name(args: &[Argument]) -> Option<String> {
    let arg = args.iter().find(|a| a.name == "message").or(args.first())?;
    let v = arg.value.trim();
    let v = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(v);
    Some(v.to_string())
}

#[derive(Debug, Clone, Default)]
struct RangeTally {
    value: u64,
    answered: u64,
}

#[derive(Debug, Default)]
pub struct Tagger {
    rule: TagRule,
    stacks: HashMap<u64, Vec<String>>,
    /// Every range name seen, with its value and answer count.
    ranges: BTreeMap<String, RangeTally>,
    next_seq: u64,
    answered_default: u64,
    passed: u64,
}

impl Tagger {
    pub fn new(rule: TagRule) -> Self {
        Tagger {
            rule,
            ..Default::default()
        }
    }

    pub fn push(&mut self, thread: u64, name: String) {
        if !self.ranges.contains_key(&name) {
            let value = match self.rule.ranges.get(&name) {
                Some(v) => *v,
                None => {
                    self.next_seq += 1;
                    self.rule.base.wrapping_add(self.next_seq)
                }
            };
            self.ranges
                .insert(name.clone(), RangeTally { value, answered: 0 });
        }
        self.stacks.entry(thread).or_default().push(name);
    }

    /// Pops the thread's innermost range; popping nothing is not an error
    /// (roctx allows it, and returns -1).
    pub fn pop(&mut self, thread: u64) {
        if let Some(stack) = self.stacks.get_mut(&thread) {
            stack.pop();
        }
    }

    /// The answer to a request from `thread`, counted.
    pub fn answer(&mut self, thread: u64) -> Option<u64> {
        let innermost = self.stacks.get(&thread).and_then(|s| s.last());
        match innermost {
            Some(name) => {
                let tally = self
                    .ranges
                    .get_mut(name)
                    .expect("every pushed name has a tally");
                tally.answered += 1;
                Some(tally.value)
            }
            None => match self.rule.default {
                Some(v) => {
                    self.answered_default += 1;
                    Some(v)
                }
                None => {
                    self.passed += 1;
                    None
                }
            },
        }
    }

    /// True when `value` is one this tagger answers with.
    pub fn is_issued(&self, value: u64) -> bool {
        self.rule.default == Some(value) || self.ranges.values().any(|t| t.value == value)
    }

    /// Requests answered with a value.
    pub fn answered(&self) -> u64 {
        self.answered_default + self.ranges.values().map(|t| t.answered).sum::<u64>()
    }

    /// Requests left to the pushed value.
    pub fn passed(&self) -> u64 {
        self.passed
    }

    /// `Range,Value,Requests` per range, then `(no range)` rows.
    pub fn report(&self) -> SummaryTable {
        let mut t = SummaryTable::new(
            format!(
                "External correlation tags ({} answered, {} left to the pushed value)",
                self.answered(),
                self.passed()
            ),
            &["Range", "Value", "Requests"],
        );
        for (name, tally) in &self.ranges {
            t.push_row([
                name.clone(),
                tally.value.to_string(),
                tally.answered.to_string(),
            ]);
        }
        match self.rule.default {
            Some(v) => t.push_row([
                "(no range)".to_string(),
                v.to_string(),
                self.answered_default.to_string(),
            ]),
            None => t.push_row([
                "(no range)".to_string(),
                "pushed".to_string(),
                self.passed.to_string(),
            ]),
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn innermost_range_per_thread_decides() {
        let mut t = Tagger::new(TagRule {
            base: 100,
            ..Default::default()
        });
        assert_eq!(
            t.answer(1),
            None,
            "no range, no default: leave the pushed value"
        );
        t.push(1, "outer".into());
        t.push(2, "other".into());
        t.push(1, "inner".into());
        assert_eq!(t.answer(1), Some(103), "inner was the third distinct name");
        assert_eq!(t.answer(2), Some(102));
        t.pop(1);
        assert_eq!(t.answer(1), Some(101));
        t.pop(1);
        t.pop(1); // unbalanced pop is harmless
        assert_eq!(t.answer(1), None);
        t.push(3, "outer".into());
        assert_eq!(t.answer(3), Some(101), "the same name keeps its value");
        assert_eq!((t.answered(), t.passed()), (4, 2));
        assert!(t.is_issued(101) && !t.is_issued(104));
    }

    #[test]
    fn configured_values_and_default() {
        let rule = TagRule::from_entries(&entries(&[
            ("base", "5"),
            ("default", "7"),
            ("ranges.solve", "42"),
            ("ranges.io.read", "\"43\""),
        ]))
        .unwrap();
        assert_eq!(rule.base, 5);
        assert_eq!(rule.default, Some(7));
        assert_eq!(rule.ranges["io.read"], 43);
        let mut t = Tagger::new(rule);
        assert_eq!(t.answer(9), Some(7));
        t.push(9, "solve".into());
        assert_eq!(t.answer(9), Some(42));
        t.push(9, "setup".into());
        assert_eq!(t.answer(9), Some(6));
        let report = t.report();
        assert_eq!(report.columns, ["Range", "Value", "Requests"]);
        assert!(report.rows.contains(&vec![
            "solve".to_string(),
            "42".to_string(),
            "1".to_string()
        ]));
        assert_eq!(
            report.rows.last().unwrap(),
            &vec!["(no range)".to_string(), "7".to_string(), "1".to_string()]
        );
    }

    #[test]
    fn bad_config_is_an_error_naming_the_key() {
        assert!(TagRule::from_entries(&entries(&[("default", "none")]))
            .unwrap()
            .default
            .is_none());
        let err = TagRule::from_entries(&entries(&[("ranges.x", "lots")])).unwrap_err();
        assert!(err.contains("ranges.x"), "{err}");
    }

    #[test]
    fn range_names_come_from_the_message_argument() {
        let arg = |n: &str, v: &str| Argument {
            name: n.into(),
            type_name: "const char*".into(),
            value: v.into(),
        };
        assert_eq!(
            range_name(&[arg("message", "\"solve\"")]),
            Some("solve".into())
        );
        assert_eq!(
            range_name(&[arg("x", "a"), arg("message", "b")]),
            Some("b".into())
        );
        assert_eq!(range_name(&[arg("msg", "c")]), Some("c".into()));
        assert_eq!(range_name(&[]), None);
    }
}

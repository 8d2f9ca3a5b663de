//! Time units as rocprofv3's options spell them (`--collection-period-unit`,
//! `--summary-units`), in one table: each option accepts its own subset.

/// Every unit rocprofv3 names, with its nanoseconds, largest first.
const UNITS: [(&str, u64); 6] = [
    ("hour", 3_600_000_000_000),
    ("min", 60_000_000_000),
    ("sec", 1_000_000_000),
    ("msec", 1_000_000),
    ("usec", 1_000),
    ("nsec", 1),
];

/// Nanoseconds per `unit`, when it is one of `accepted`.
pub(crate) fn ns_per(unit: &str, accepted: &[&str]) -> Option<u64> {
    UNITS
        .iter()
        .find(|(name, _)| *name == unit && accepted.contains(name))
        .map(|&(_, ns)| ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_counts_only_where_it_is_accepted() {
        assert_eq!(ns_per("min", &["min", "sec"]), Some(60_000_000_000));
        assert_eq!(ns_per("min", &["sec"]), None);
        assert_eq!(ns_per("days", &["days"]), None);
    }
}

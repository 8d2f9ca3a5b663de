//! How the plan writes durations and kinds: nanoseconds, and kinds and
//! operations by *name*.
//!
//! Names, not numbers, because a plan may be read by a tool library of
//! another build: a kind or operation this build does not know is then an
//! error naming it, never a silent renumbering.

/// `Duration` as whole nanoseconds (`u64`, saturating).
pub mod nanos {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_nanos)
    }
}

/// A list of buffer-tracing kinds as their SDK names.
pub mod kinds {
    use rocwasm_ids::BufferTracingKind;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kinds: &[BufferTracingKind], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(kinds.iter().map(|k| k.name()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<BufferTracingKind>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|name| kind(name).map_err(D::Error::custom))
            .collect()
    }

    pub(crate) fn kind(name: &str) -> Result<BufferTracingKind, String> {
        BufferTracingKind::from_name(name)
            .ok_or_else(|| format!("unknown buffer-tracing kind {name:?}"))
    }

    /// `Option<Vec<…>>` of the same.
    pub mod option {
        use rocwasm_ids::BufferTracingKind;
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        #[derive(Serialize, Deserialize)]
        struct Kinds(#[serde(with = "super")] Vec<BufferTracingKind>);

        pub fn serialize<S: Serializer>(
            kinds: &Option<Vec<BufferTracingKind>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            kinds.as_ref().map(|k| Kinds(k.clone())).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Vec<BufferTracingKind>>, D::Error> {
            Ok(Option::<Kinds>::deserialize(d)?.map(|k| k.0))
        }
    }
}

/// Operation filters, kind → operation numbers, as kind name → operation names.
pub mod operations {
    use std::collections::BTreeMap;

    use rocwasm_ids::{operation_by_name, operation_name, BufferTracingKind};
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        ops: &BTreeMap<BufferTracingKind, Vec<u32>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut named = BTreeMap::new();
        for (kind, ops) in ops {
            let names = ops
                .iter()
                .map(|&op| {
                    operation_name(*kind, op).ok_or_else(|| {
                        S::Error::custom(format!("{} has no operation {op}", kind.name()))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            named.insert(kind.name(), names);
        }
        s.collect_map(named)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<BufferTracingKind, Vec<u32>>, D::Error> {
        let named = BTreeMap::<String, Vec<String>>::deserialize(d)?;
        let mut ops = BTreeMap::new();
        for (kind, names) in named {
            let kind = super::kinds::kind(&kind).map_err(D::Error::custom)?;
            let numbers = names
                .iter()
                .map(|name| {
                    operation_by_name(kind, name).ok_or_else(|| {
                        D::Error::custom(format!("{} has no operation {name:?}", kind.name()))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            ops.insert(kind, numbers);
        }
        Ok(ops)
    }
}

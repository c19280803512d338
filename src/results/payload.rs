//! The part of a step file its suite owns: one value per suite, written under the suite's
//! registered name beside the fields every step has (`"sysbench": {...}` in a sysbench step,
//! `"ibench": {...}` in an Insert Benchmark step). A suite's driver fills only its own variant,
//! and only its report section reads it; a new suite adds its variant here and its type in a
//! file of its own.

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::suites::Suite;

/// What a step's suite measured in its own terms. A variant's name is its suite's registered
/// name (`tests` hold the two to each other).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Payload {
    Ibench(super::ibench::IbenchStep),
    Sysbench(super::sysbench::SysbenchStep),
    Tpcc(super::tpcc::TpccStep),
    Pgbench(super::pgbench::PgbenchStep),
}

impl Payload {
    /// The suite whose payload it is.
    pub fn suite(&self) -> Suite {
        match self {
            Payload::Ibench(_) => Suite::Ibench,
            Payload::Sysbench(_) => Suite::Sysbench,
            Payload::Tpcc(_) => Suite::Tpcc,
            Payload::Pgbench(_) => Suite::Pgbench,
        }
    }
}

/// The payload as members of the step file itself (`#[serde(flatten, with = "flat")]`): at most
/// one member named by a registered suite, read strictly (a damaged payload is an error, not a
/// step without one), every other member left to the step file's own fields.
pub mod flat {
    use super::*;

    pub fn serialize<S: serde::Serializer>(p: &Option<Payload>, s: S) -> Result<S::Ok, S::Error> {
        match p {
            Some(p) => p.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Payload>, D::Error> {
        d.deserialize_map(Members)
    }

    struct Members;

    impl<'de> Visitor<'de> for Members {
        type Value = Option<Payload>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a step file's members")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found: Option<(String, serde_json::Value)> = None;
            while let Some(key) = map.next_key::<String>()? {
                if Suite::parse(&key).is_none() {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                let value: serde_json::Value = map.next_value()?;
                if let Some((first, _)) = &found {
                    return Err(de::Error::custom(format!(
                        "the step has two suites' parts, {first} and {key}"
                    )));
                }
                found = Some((key, value));
            }
            let Some((key, value)) = found else {
                return Ok(None);
            };
            let mut one = serde_json::Map::new();
            one.insert(key.clone(), value);
            Payload::deserialize(serde_json::Value::Object(one))
                .map(Some)
                .map_err(|e| de::Error::custom(format!("its {key} part: {e}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_is_written_under_its_suites_name() {
        let ib = Payload::Ibench(crate::results::ibench::IbenchStep {
            rows_per_commit: 1,
            planned_rows: 2,
            rate_per_client: None,
            deletes: false,
            queries: None,
            sla: None,
        });
        let v = serde_json::to_value(&ib).unwrap();
        let key = v.as_object().unwrap().keys().next().unwrap().clone();
        assert_eq!(Suite::parse(&key), Some(ib.suite()));
        assert_eq!(ib.suite(), Suite::Ibench);
    }
}

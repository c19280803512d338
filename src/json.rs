//! A JSON value as flat `key = value` pairs, so two of them (host fingerprints, a run's
//! parameters, a cell's definition) can be compared key by key. One function for the report,
//! the host monitor and the session's cell fingerprint: they differ only in what they leave
//! out and how they name an array's elements, which `Flatten` says.

use std::collections::BTreeMap;

use serde_json::Value;

/// How `flatten` walks a value.
pub(crate) struct Flatten<'a> {
    /// Object keys left out with all below them (values that move by themselves).
    pub skip: &'a [&'a str],
    /// For an array of objects: the keys whose string value names an element (the first one
    /// present), so an element's path does not shift when another goes; an element with none
    /// of them is named by its index. None: every array is one value, its JSON text.
    pub element_names: Option<&'a [&'a str]>,
}

/// Every leaf of `v` under `path` (`a.b`, `a.list[name]`; `path` empty for the top), a string
/// as itself and any other leaf as its JSON text (`null`, `3`, `true`, `[1,2]`).
pub(crate) fn flatten(v: &Value, how: &Flatten, path: String, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter().filter(|(k, _)| !how.skip.contains(&k.as_str())) {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                flatten(x, how, p, out);
            }
        }
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_object) => {
            let Some(names) = how.element_names else {
                out.insert(path, v.to_string());
                return;
            };
            for (i, x) in a.iter().enumerate() {
                let id = names
                    .iter()
                    .find_map(|k| x.get(*k).and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_else(|| i.to_string());
                flatten(x, how, format!("{path}[{id}]"), out);
            }
        }
        Value::String(s) => {
            out.insert(path, s.clone());
        }
        other => {
            out.insert(path, other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(v: Value, how: &Flatten, path: &str) -> Vec<(String, String)> {
        let mut out = BTreeMap::new();
        flatten(&v, how, path.to_string(), &mut out);
        out.into_iter().collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn objects_join_with_dots_and_skip_what_they_are_told() {
        let v = serde_json::json!({"a": {"b": "x", "c": 3, "note": "y"}, "d": null, "e": [1, 2]});
        let how = Flatten {
            skip: &["note"],
            element_names: Some(&["name"]),
        };
        assert_eq!(
            flat(v.clone(), &how, ""),
            pairs(&[("a.b", "x"), ("a.c", "3"), ("d", "null"), ("e", "[1,2]")])
        );
        // Under a prefix, as the cell fingerprint writes `<suite>.<parameter>`.
        assert_eq!(
            flat(serde_json::json!({"k": 1}), &how, "ibench"),
            pairs(&[("ibench.k", "1")])
        );
    }

    #[test]
    fn elements_are_named_by_their_own_key_or_kept_whole() {
        let v = serde_json::json!({"p": [{"name": "policy1", "g": "perf"}, {"g": "save"}]});
        let named = Flatten {
            skip: &[],
            element_names: Some(&["path", "name"]),
        };
        assert_eq!(
            flat(v.clone(), &named, ""),
            pairs(&[
                ("p[1].g", "save"),
                ("p[policy1].g", "perf"),
                ("p[policy1].name", "policy1")
            ])
        );
        let whole = Flatten {
            skip: &[],
            element_names: None,
        };
        assert_eq!(
            flat(v.clone(), &whole, ""),
            vec![("p".into(), v["p"].to_string())]
        );
    }
}

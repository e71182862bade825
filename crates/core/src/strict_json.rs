//! JSON read strictly: a key given twice in one object is an error naming the key and its line.
//!
//! `serde_json::Value` keeps the last of two equal keys silently (as Python's `json.load` does),
//! so `{"hidden": 4096, …, "hidden": 8192}` would be read as 8192 without a word. Every reader of a
//! JSON document a person wrote (model, system and scenario documents, reference-format files,
//! measured-run files, calibrations, saved scenarios, launch files) parses through [`parse`]; the
//! compiled-in data files may use `serde_json` directly (a test reads each of them through
//! [`parse`] too). Nesting is bounded by `serde_json`'s own recursion limit (128 levels), so hostile
//! input cannot exhaust the stack.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses `text` as one JSON value; a key given twice in one object is an error
/// (`the key "e" is given twice at line 1 column 22`), every other error is `serde_json`'s own.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Strict>(text).map(|Strict(v)| v)
}

/// A JSON value read with duplicate keys refused.
struct Strict(Value);

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
        Ok(Strict(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Strict, E> {
        Ok(Strict(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Strict, E> {
        Ok(Strict(Value::String(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Strict, E> {
        Ok(Strict(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Strict(Value::Array(out)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // Checked before the value is read, so the error's position is the second key's line.
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("the key \"{key}\" is given twice")));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Strict(Value::Object(out)))
    }
}

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn a_key_given_twice_is_named_with_its_line() {
        let e = parse("{\n  \"e\": 1024,\n  \"e\": 2048\n}").unwrap_err().to_string();
        assert!(e.contains("the key \"e\" is given twice") && e.contains("line 3"), "{e}");
        let nested = parse(r#"{"a": [{"b": 1, "b": 1}]}"#).unwrap_err().to_string();
        assert!(nested.contains("\"b\" is given twice"), "{nested}");
    }

    #[test]
    fn the_same_key_in_different_objects_and_every_value_kind_read_as_serde_json_does() {
        let text = r#"{"a": {"k": 1}, "b": {"k": -2.5e3}, "c": [true, null, "s", 18446744073709551615]}"#;
        assert_eq!(parse(text).unwrap(), serde_json::from_str::<serde_json::Value>(text).unwrap());
    }

    #[test]
    fn the_compiled_in_data_files_give_no_key_twice() {
        for (name, text) in [
            ("hardware-catalog.json", include_str!("../data/hardware-catalog.json")),
            ("holdout-shipped.json", include_str!("../data/holdout-shipped.json")),
            ("measured-layout-sweeps.json", include_str!("../data/measured-layout-sweeps.json")),
            ("measured-memory-runs.json", include_str!("../data/measured-memory-runs.json")),
            ("measured-moe-runs.json", include_str!("../data/measured-moe-runs.json")),
            ("measured-training-runs.json", include_str!("../data/measured-training-runs.json")),
            ("memory-breakdowns.json", include_str!("../data/memory-breakdowns.json")),
            ("models-moe.json", include_str!("../data/models-moe.json")),
            ("models.json", include_str!("../data/models.json")),
            ("run-cost-examples.json", include_str!("../data/run-cost-examples.json")),
            ("system-modelling.json", include_str!("../data/system-modelling.json")),
        ] {
            assert!(parse(text).is_ok(), "{name}: {:?}", parse(text).err());
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).unwrap_err().to_string().contains("recursion limit"));
    }
}

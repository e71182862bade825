//! The reference's own JSON formats: a model object `{"l", "e", "h", "depth"}` (optional `"f"`,
//! default `4·e`) as in `models.py`, and a system file `systems/config-<name>.json` (spec §1.2).
//!
//! Parsing is strict: unknown fields are rejected with the nearest known name, wrong types and
//! invalid values name the field. Quirk Q18: `vector_flops_fp32` and `summa_nb` are accepted and
//! not used by the model (`summa_nb` is a search variable); `empirical` must be `false`.

use serde_json::{Map, Value};

use crate::{Error, ModelShape, SystemParams};

const MODEL_FIELDS: [&str; 5] = ["l", "e", "h", "depth", "f"];

/// The system file's keys not in [`SystemParams::FIELDS`]: accepted, not used (Q18).
const UNUSED_SYSTEM_FIELDS: [&str; 2] = ["empirical", "summa_nb"];

impl ModelShape {
    /// Parses the reference's model object, e.g. `{"l": 2048, "e": 12288, "h": 96, "depth": 96}`,
    /// and validates it.
    pub fn from_reference_json(text: &str) -> Result<ModelShape, Error> {
        let obj = object(text, "model")?;
        reject_unknown(&obj, &MODEL_FIELDS, "model")?;
        let l = count(&obj, "model", "l")?;
        let e = count(&obj, "model", "e")?;
        let h = count(&obj, "model", "h")?;
        let depth = count(&obj, "model", "depth")?;
        let f = if obj.contains_key("f") { count(&obj, "model", "f")? } else { e.saturating_mul(4) };
        let m = ModelShape { l, e, h, depth, f };
        m.validate()?;
        Ok(m)
    }
}

impl SystemParams {
    /// Parses a reference system file (`systems/config-<name>.json`) and validates it.
    pub fn from_reference_json(text: &str) -> Result<SystemParams, Error> {
        let obj = object(text, "system")?;
        let known: Vec<&str> = SystemParams::FIELDS.iter().chain(&UNUSED_SYSTEM_FIELDS).copied().collect();
        reject_unknown(&obj, &known, "system")?;
        let num = |k: &str| number(&obj, "system", k);
        if let Some(v) = obj.get("empirical") {
            match v {
                Value::Bool(false) => {}
                Value::Bool(true) => {
                    return Err(Error::invalid("system.empirical", "true", "must be false")
                        .with_hint("the reference's measured-bandwidth mode needs data that is not published"));
                }
                other => return Err(Error::invalid("system.empirical", other, "must be a boolean (false)")),
            }
        }
        if obj.contains_key("summa_nb") {
            count(&obj, "system", "summa_nb")?;
        }
        let s = SystemParams {
            matrix_flops_fp16: num("matrix_flops_fp16")?,
            vector_flops_fp16: num("vector_flops_fp16")?,
            vector_flops_fp32: if obj.contains_key("vector_flops_fp32") { num("vector_flops_fp32")? } else { 0.0 },
            hbm_bandwidth: num("hbm_bandwidth")?,
            hbm_capacity: num("hbm_capacity")?,
            nvlink_bandwidth: num("nvlink_bandwidth")?,
            nvlink_eff: num("nvlink_eff")?,
            nvlink_latency: num("nvlink_latency")?,
            ib_bandwidth: num("ib_bandwidth")?,
            ib_eff: num("ib_eff")?,
            ib_latency: num("ib_latency")?,
            domain_size: count(&obj, "system", "nvlink_size")?,
            nic_factor: num("nic_factor")?,
            element_size: num("element_size")?,
            mask_element_size: num("mask_element_size")?,
            flops_units: num("flops_units")?,
        };
        s.validate()?;
        Ok(s)
    }
}

fn object(text: &str, what: &str) -> Result<Map<String, Value>, Error> {
    match crate::strict_json::parse(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::Parse { message: format!("the {what} must be a JSON object") }),
        Err(e) => Err(Error::Parse { message: format!("{what} JSON: {e}") }),
    }
}

fn reject_unknown(obj: &Map<String, Value>, known: &[&str], what: &str) -> Result<(), Error> {
    for key in obj.keys() {
        if !known.contains(&key.as_str()) {
            let nearest = known.iter().min_by_key(|k| edit_distance(k, key)).copied().unwrap_or_default();
            let hint = if edit_distance(nearest, key) <= 3 {
                format!("did you mean `{nearest}`?")
            } else {
                format!("known fields: {}", known.join(", "))
            };
            return Err(Error::UnknownField { field: format!("{what}.{key}"), hint: Some(hint) });
        }
    }
    Ok(())
}

fn number(obj: &Map<String, Value>, what: &str, key: &str) -> Result<f64, Error> {
    match obj.get(key) {
        None => Err(Error::MissingField { field: format!("{what}.{key}") }),
        Some(Value::Number(n)) => {
            n.as_f64().ok_or_else(|| Error::invalid(format!("{what}.{key}"), n, "must be a finite number"))
        }
        Some(other) => Err(Error::invalid(format!("{what}.{key}"), other, "must be a number")),
    }
}

fn count(obj: &Map<String, Value>, what: &str, key: &str) -> Result<u64, Error> {
    match obj.get(key) {
        None => Err(Error::MissingField { field: format!("{what}.{key}") }),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if v > 0 => Ok(v),
            _ => Err(Error::invalid(format!("{what}.{key}"), n, "must be a positive integer")),
        },
        Some(other) => Err(Error::invalid(format!("{what}.{key}"), other, "must be a positive integer")),
    }
}

/// Levenshtein distance, for "did you mean" hints.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: &str = r#"{"matrix_flops_fp16": 989.4, "vector_flops_fp32": 66.9, "vector_flops_fp16": 133.8,
        "hbm_bandwidth": 4800, "hbm_capacity": 141, "nvlink_bandwidth": 450, "nvlink_eff": 0.7,
        "nvlink_latency": 2.5e-06, "ib_bandwidth": 50, "ib_eff": 0.7, "ib_latency": 5e-06, "nvlink_size": 64,
        "nic_factor": 1, "empirical": false, "summa_nb": 4, "element_size": 2e-09, "mask_element_size": 1e-09,
        "flops_units": 1e-12}"#;

    #[test]
    fn reference_system_file_round_trips() {
        assert_eq!(SystemParams::from_reference_json(H200).unwrap(), SystemParams::h200());
    }

    #[test]
    fn model_defaults_f_and_rejects_bad_fields() {
        let m = ModelShape::from_reference_json(r#"{"l": 2048, "e": 25600, "h": 160, "depth": 128}"#).unwrap();
        assert_eq!(m, ModelShape::GPT3_1T);
        let e = ModelShape::from_reference_json(r#"{"l": 2048, "e": 25600, "h": 160, "dept": 128}"#).unwrap_err();
        assert_eq!(e.field(), Some("model.dept"));
        assert!(e.to_string().contains("`depth`"), "{e}");
        let e = ModelShape::from_reference_json(r#"{"l": "2048", "e": 25600, "h": 160, "depth": 128}"#).unwrap_err();
        assert_eq!(e.field(), Some("model.l"));
        let e = ModelShape::from_reference_json(r#"{"l": 2048, "e": 25600, "h": 160}"#).unwrap_err();
        assert_eq!(e.field(), Some("model.depth"));
        assert!(matches!(ModelShape::from_reference_json("{"), Err(Error::Parse { .. })));
    }

    #[test]
    fn system_rejects_empirical_and_typos() {
        let e = SystemParams::from_reference_json(&H200.replace("\"empirical\": false", "\"empirical\": true"))
            .unwrap_err();
        assert_eq!(e.field(), Some("system.empirical"));
        let e = SystemParams::from_reference_json(&H200.replace("hbm_capacity", "hbm_capacty")).unwrap_err();
        assert!(e.to_string().contains("hbm_capacity"), "{e}");
        let e = SystemParams::from_reference_json(&H200.replace("\"nvlink_size\": 64", "\"nvlink_size\": 6.5"))
            .unwrap_err();
        assert_eq!(e.field(), Some("system.nvlink_size"));
    }
}

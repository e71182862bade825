//! The calibration document: versioned JSON that names its system, the stack constants and the
//! measured run they came from.
//!
//! ```json
//! {"version": 1,
//!  "system": "nvidia_h100_sxm5_80gb",
//!  "stack_constants": {"compute_scale": 0.87, "scale_out_bandwidth_scale": 1.0, "memory_overhead_gb": 2.1},
//!  "changed": ["compute_scale 1 → 0.870 (-13.0 %)", "memory_overhead_gb 0 → +2.10 GB"],
//!  "from": {"model": "…", "devices": 64, "layout": "…", "measured": [{"figure": "step_time_s",
//!           "value": 9.1, "source": "…", "predicted_before": 7.9, "predicted_after": 9.1}], "notes": […]}}
//! ```
//!
//! Read back ([`Calibration::parse`]): an unknown version, a missing or out-of-bounds constant,
//! an unknown key are errors naming the field; [`Calibration::check_system`] refuses to apply a
//! calibration to another system. `changed` and `from` are what the user reads: kept as written.

use serde_json::{Map, Value, json};

use super::constants::{ALL, StackConstants};
use super::fit::Fitted;
use crate::Error;

/// The version this fmperf writes and reads.
pub const VERSION: u64 = 1;

/// A calibration of one system.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Catalog id of the system it was measured on.
    pub system: String,
    /// The constants.
    pub constants: StackConstants,
    /// The measured run it came from (model, devices, layout, figures predicted before and after).
    pub from: Value,
}

impl Calibration {
    /// The document of a fit on `system` for the run described by `model`, `devices` and `layout`.
    pub fn of_fit(system: &str, model: &str, devices: u64, layout: &str, fitted: &Fitted) -> Calibration {
        let measured: Vec<Value> = fitted
            .figures
            .iter()
            .map(|c| {
                json!({
                    "figure": c.measured.figure.key(),
                    "value": c.measured.value,
                    "source": c.measured.source,
                    "predicted_before": c.before,
                    "predicted_after": c.after,
                    "used_in_fit": c.fitted,
                })
            })
            .collect();
        Calibration {
            system: system.to_string(),
            constants: fitted.constants,
            from: json!({
                "model": model,
                "devices": devices,
                "layout": layout,
                "measured": measured,
                "notes": fitted.notes,
            }),
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> Value {
        let c = &self.constants;
        json!({
            "version": VERSION,
            "system": self.system,
            "stack_constants": {
                "compute_scale": c.compute_scale,
                "scale_out_bandwidth_scale": c.scale_out_bandwidth_scale,
                "memory_overhead_gb": c.memory_overhead_gb,
            },
            "changed": c.changes().iter().map(|x| x.text()).collect::<Vec<String>>(),
            "from": self.from,
        })
    }

    /// Reads a document ([`Calibration::to_json`]'s shape); errors name the field and the rule.
    pub fn parse(text: &str) -> Result<Calibration, Error> {
        let doc: Value = crate::strict_json::parse(text)
            .map_err(|e| Error::invalid("calibration", "the file", format!("is not JSON: {e}")))?;
        let Some(obj) = doc.as_object() else {
            return Err(Error::invalid("calibration", "the file", "must be a JSON object"));
        };
        for key in obj.keys() {
            if !["version", "system", "stack_constants", "changed", "from"].contains(&key.as_str()) {
                return Err(Error::invalid(
                    format!("calibration.{key}"),
                    "present",
                    "is not a key of a calibration (version, system, stack_constants, changed, from)",
                ));
            }
        }
        match obj.get("version") {
            Some(Value::Number(n)) if n.as_u64() == Some(VERSION) => {}
            Some(v) => {
                return Err(Error::invalid(
                    "calibration.version",
                    v,
                    format!("is not a version this fmperf reads (version {VERSION})"),
                ));
            }
            None => return Err(Error::MissingField { field: "calibration.version".into() }),
        }
        let system = match obj.get("system") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(v) => return Err(Error::invalid("calibration.system", v, "must be a system's catalog id")),
            None => return Err(Error::MissingField { field: "calibration.system".into() }),
        };
        let constants = read_constants(obj.get("stack_constants"))?;
        Ok(Calibration { system, constants, from: obj.get("from").cloned().unwrap_or(Value::Null) })
    }

    /// An error unless the calibration was measured on `system_id`.
    pub fn check_system(&self, system_id: &str) -> Result<(), Error> {
        if self.system == system_id {
            return Ok(());
        }
        Err(Error::invalid(
            "calibration.system",
            &self.system,
            format!(
                "was measured on another system than {system_id}: a stack's constants describe one system; \
                 calibrate on a run of {system_id}"
            ),
        ))
    }
}

fn read_constants(v: Option<&Value>) -> Result<StackConstants, Error> {
    let field = "calibration.stack_constants";
    let Some(v) = v else { return Err(Error::MissingField { field: field.into() }) };
    let Some(obj) = v.as_object() else {
        return Err(Error::invalid(field, v, "must be an object of the stack constants"));
    };
    let known: Vec<&str> = ALL.iter().map(|s| s.key).collect();
    if let Some(k) = obj.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(Error::invalid(
            format!("{field}.{k}"),
            "present",
            format!("is not a constant ({})", known.join(", ")),
        ));
    }
    let get = |key: &str, obj: &Map<String, Value>| -> Result<f64, Error> {
        match obj.get(key) {
            Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or(f64::NAN)),
            Some(v) => Err(Error::invalid(format!("{field}.{key}"), v, "must be a number")),
            None => Err(Error::MissingField { field: format!("{field}.{key}") }),
        }
    };
    let c = StackConstants {
        compute_scale: get("compute_scale", obj)?,
        scale_out_bandwidth_scale: get("scale_out_bandwidth_scale", obj)?,
        memory_overhead_gb: get("memory_overhead_gb", obj)?,
    };
    c.check(field)?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let c = Calibration {
            system: "nvidia_h100_sxm5_80gb".into(),
            constants: StackConstants { compute_scale: 0.9, scale_out_bandwidth_scale: 1.2, memory_overhead_gb: 1.5 },
            from: json!({"model": "m"}),
        };
        let text = c.to_json().to_string();
        assert_eq!(Calibration::parse(&text).unwrap(), c);
        assert!(c.check_system("nvidia_h100_sxm5_80gb").is_ok());
        let e = c.check_system("nvidia_a100_sxm4_80gb").unwrap_err().to_string();
        assert!(e.contains("another system"), "{e}");
        let e = Calibration::parse(&text.replace("\"version\":1", "\"version\":2")).unwrap_err().to_string();
        assert!(e.contains("calibration.version") && e.contains('2'), "{e}");
        let e = Calibration::parse(&text.replace("0.9", "7.0")).unwrap_err().to_string();
        assert!(e.contains("compute_scale") && e.contains("0.5 to 1.5"), "{e}");
        let e = Calibration::parse(&text.replace("\"memory_overhead_gb\":1.5", "\"memory_overhead\":1.5"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("memory_overhead"), "{e}");
        assert!(Calibration::parse("[1]").is_err());
        assert!(Calibration::parse("{").is_err());
        assert!(
            Calibration::parse(r#"{"version":1,"system":"x"}"#).unwrap_err().to_string().contains("stack_constants")
        );
    }
}

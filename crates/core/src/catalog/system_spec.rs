//! The text form of a system choice, as the CLI's `--system`, the explorer's URL and a sweep
//! write it: `ID[,key=value]...` — the catalog id, then options that override the mapping
//! ([`MappingOptions`]: domain size in devices, NICs per device, precision, vector rate in TFLOP/s,
//! scale-up and scale-out bandwidth in GB/s one direction) and describe the scale-out fabric (kind,
//! latency in µs per network step, achievable fraction, oversubscription, rails). Every key is
//! checked; a key given twice with two values is an error naming both.

use super::fabric::{Fabric, FabricKind};
use super::mapping::MappingOptions;
use crate::schema::fields::FABRIC_KIND_NAMES;
use crate::{Error, hint};

/// The keys of a system spec string (`ID,key=value,...`).
pub const SPEC_KEYS: &[&str] = &[
    "domain",
    "nics",
    "precision",
    "vector",
    "scale_up",
    "scale_out",
    "fabric",
    "fabric_latency_us",
    "fabric_eff",
    "oversub",
    "rails",
];

/// Parses a system spec `ID[,key=value]...` with keys `domain` (devices), `nics` (NICs per
/// device), `precision` (fp32|tf32|fp16|bf16|fp8), `vector` (TFLOP/s), `scale_up` (GB/s, one
/// direction), `scale_out` (GB/s per NIC, one direction), and the scale-out fabric's `fabric`
/// (kind: `infiniband_ndr`, `roce`, `efa`, `tpu_dcn`, …), `fabric_latency_us` (µs per network
/// step), `fabric_eff` (achievable fraction), `oversub` (r of r:1) and `rails` (yes|no). Returns
/// the id and the options.
pub fn parse_system_spec(spec: &str) -> Result<(String, MappingOptions), Error> {
    let mut parts = spec.split(',');
    let id = parts.next().unwrap_or("").trim().to_string();
    if id.is_empty() {
        return Err(Error::invalid("system", spec, "must start with a catalog id")
            .with_hint("e.g. `nvidia_h100_sxm5_80gb,domain=8`"));
    }
    let mut o = MappingOptions::default();
    // Each key set so far: its canonical name, the option as typed and what it alone sets.
    let mut seen: Vec<(&str, &str, MappingOptions)> = Vec::new();
    for part in parts {
        let mut alone = MappingOptions::default();
        let key = spec_option(part, &mut alone)?;
        spec_option(part, &mut o)?;
        match seen.iter().find(|(k, _, _)| *k == key) {
            Some((_, first, was)) if *was != alone => return Err(Error::given_twice("system", key, first, part)),
            Some(_) => {}
            None => seen.push((key, part, alone)),
        }
    }
    Ok((id, o))
}

/// Applies one fabric option of a system spec (`fabric`, `fabric_latency_us`, `fabric_eff`,
/// `oversub`, `rails`) to `fb`; returns the key's canonical name.
fn fabric_option(k: &str, v: &str, fb: &mut Fabric) -> Result<&'static str, Error> {
    // A number that passes `ok`, else an error naming the key and `rule`.
    let number = |ok: fn(f64) -> bool, rule: &str| {
        v.parse::<f64>().ok().filter(|x| x.is_finite() && ok(*x)).ok_or_else(|| Error::invalid(k, v, rule.to_string()))
    };
    Ok(match k {
        "fabric" => {
            fb.kind = Some(FabricKind::from_name(v).ok_or_else(|| {
                Error::invalid("fabric", v, "must name a fabric kind")
                    .with_hint(format!("one of {}", FABRIC_KIND_NAMES.join(", ")))
            })?);
            "fabric"
        }
        "fabric_latency_us" => {
            let us = number(|x| (0.0..=1e6).contains(&x), "must be a latency per network step in µs, 0 to 1e6")?;
            fb.latency_s = Some(us / 1e6);
            "fabric_latency_us"
        }
        "fabric_eff" => {
            fb.achievable = Some(number(|x| x > 0.0 && x <= 1.0, "must be a fraction in (0, 1]")?);
            "fabric_eff"
        }
        "oversub" => {
            fb.oversubscription = Some(number(|x| x >= 1.0, "must be the ratio r of r:1, at least 1")?);
            "oversub"
        }
        _ => {
            fb.rail_optimised = Some(match v.to_ascii_lowercase().as_str() {
                "yes" | "true" | "1" => true,
                "no" | "false" | "0" => false,
                _ => {
                    return Err(Error::invalid("rails", v, "must be yes or no (whether the fabric is rail-optimised)"));
                }
            });
            "rails"
        }
    })
}

/// Applies one option `key=value` of a system spec to `o`; returns the key's canonical name.
fn spec_option(part: &str, o: &mut MappingOptions) -> Result<&'static str, Error> {
    {
        let Some((k, v)) = part.split_once('=') else {
            return Err(Error::invalid("system", part, "options must be written key=value")
                .with_hint(format!("known keys: {}", SPEC_KEYS.join(", "))));
        };
        let (k, v) = (k.trim(), v.trim());
        let int = |name: &str| -> Result<u64, Error> {
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| Error::invalid(name, v, "must be a positive integer"))
        };
        let num = |name: &str| -> Result<f64, Error> {
            v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| {
                Error::invalid(name, v, "must be a positive number").with_hint(if name == "vector" {
                    "in TFLOP/s"
                } else {
                    "in GB/s, one direction"
                })
            })
        };
        Ok(match k {
            // Old names of the scale-up domain size, accepted as aliases (issue 11: one name).
            "domain" | "nvlink" | "nvs" | "nvlink_size" | "domain_size" => {
                o.domain_size = Some(int("domain")?);
                "domain"
            }
            "nics" => {
                o.nics_per_device = Some(int("nics")?);
                "nics"
            }
            "precision" => {
                o.precision = Some(v.parse()?);
                "precision"
            }
            "vector" => {
                o.vector_tflops = Some(num("vector")?);
                "vector"
            }
            "scale_up" => {
                o.scale_up_gbps = Some(num("scale_up")?);
                "scale_up"
            }
            "scale_out" => {
                o.scale_out_gbps = Some(num("scale_out")?);
                "scale_out"
            }
            "fabric" | "fabric_latency_us" | "fabric_eff" | "oversub" | "rails" => {
                let mut fb = o.fabric.unwrap_or_default();
                let key = fabric_option(k, v, &mut fb)?;
                o.fabric = Some(fb);
                key
            }
            other => {
                let e = Error::UnknownField { field: other.to_string(), hint: None };
                return Err(e.with_hint(match hint::nearest(other, SPEC_KEYS.iter().copied()) {
                    Some(n) => format!("did you mean `{n}`?"),
                    None => format!("known keys: {}", SPEC_KEYS.join(", ")),
                }));
            }
        })
    }
}

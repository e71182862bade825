//! The system spec as the page holds it: the CLI's `--system` text, `ID[,key=value]…`
//! (core's [`fmperf_core::catalog::parse_system_spec`] reads it and is the only validator). The
//! page's form edits one option at a time; these functions take the text apart and put it back
//! together without judging the values, so whatever the user typed is kept.
//!
//! Options (units as the CLI's): `nics` (NICs per device), `precision` (fp32, tf32, fp16, bf16,
//! fp8), `vector` (TFLOP/s), `scale_up` (GB/s per device, one direction), `scale_out` (GB/s per
//! NIC, one direction). The domain size has its own form field and URL key (`domain`) but is
//! accepted inside the spec too.

/// The options the page edits in the system spec (the domain size has its own field).
pub const OPTION_KEYS: [&str; 5] = ["nics", "precision", "vector", "scale_up", "scale_out"];

/// The catalog id of a spec (the text before the first comma, trimmed).
pub fn id_of(spec: &str) -> &str {
    spec.split(',').next().unwrap_or("").trim()
}

/// The `key=value` options of a spec, in order, as typed (a part without `=` has an empty value).
pub fn options_of(spec: &str) -> Vec<(String, String)> {
    spec.split(',')
        .skip(1)
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

/// The value of option `key` in a spec (`None`: not given).
pub fn option(spec: &str, key: &str) -> Option<String> {
    options_of(spec).into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The spec of `id` with `options` (empty values left out).
pub fn join(id: &str, options: &[(String, String)]) -> String {
    let mut out = id.trim().to_string();
    for (k, v) in options.iter().filter(|(_, v)| !v.is_empty()) {
        out.push(',');
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
    out
}

/// `spec` with option `key` set to `value` (removed when `value` is empty; commas in `value`
/// would split the spec, so they are dropped).
pub fn set_option(spec: &str, key: &str, value: &str) -> String {
    let value: String = value.chars().filter(|c| *c != ',').collect();
    let mut opts = options_of(spec);
    match opts.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value.trim().to_string(),
        None => opts.push((key.to_string(), value.trim().to_string())),
    }
    join(id_of(spec), &opts)
}

/// `spec` with its id replaced by `id`, options kept.
pub fn with_id(spec: &str, id: &str) -> String {
    join(id, &options_of(spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::catalog::parse_system_spec;

    #[test]
    fn options_round_trip_and_core_reads_the_result() {
        let mut spec = "nvidia_gb200_nvl72".to_string();
        for (k, v) in [("nics", "2"), ("precision", "fp8"), ("vector", "80"), ("scale_up", "900"), ("scale_out", "50")]
        {
            spec = set_option(&spec, k, v);
        }
        assert_eq!(spec, "nvidia_gb200_nvl72,nics=2,precision=fp8,vector=80,scale_up=900,scale_out=50");
        for (k, v) in [("nics", "2"), ("precision", "fp8"), ("vector", "80"), ("scale_up", "900"), ("scale_out", "50")]
        {
            assert_eq!(option(&spec, k).as_deref(), Some(v));
        }
        let (id, o) = parse_system_spec(&spec).unwrap();
        assert_eq!(id, "nvidia_gb200_nvl72");
        assert_eq!(o.nics_per_device, Some(2));
        assert_eq!(o.scale_out_gbps, Some(50.0));
        // Clearing an option removes it; changing the id keeps the options.
        let spec = set_option(&spec, "vector", "");
        assert_eq!(option(&spec, "vector"), None);
        assert_eq!(with_id(&spec, "amd_mi300x"), "amd_mi300x,nics=2,precision=fp8,scale_up=900,scale_out=50");
        assert_eq!(id_of(" ref-H200 "), "ref-H200");
    }

    #[test]
    fn values_are_kept_as_typed_even_when_invalid() {
        let spec = set_option("x", "nics", "two");
        assert_eq!(spec, "x,nics=two");
        assert!(parse_system_spec(&spec).is_err());
        assert_eq!(set_option("x", "scale_out", "5,0"), "x,scale_out=50");
    }
}

//! Hardware named in words → a catalog system. Measured-run files describe their accelerator as
//! people write it (`"NVIDIA H100 SXM 96GB HBM2e at 500 W"`, `"8x AMD Instinct MI300X (192 GB
//! HBM3)"`, `"Google TPU v5p"`); this module finds the catalog entry they mean by meaning, not by
//! exact strings:
//!
//! * the text is lowered and split into tokens (letters and digits; a number directly followed by
//!   `GB`/`GiB` becomes one capacity token, so `96GB` and `96 GB` read alike);
//! * each entry is known by its id, its name and its `aliases`; an alias counts when its tokens
//!   appear in the text consecutively, and the longest such alias scores its token count;
//! * a memory capacity stated in the text (GB or GiB) that equals the entry's (within 4 %, read
//!   as GB or GiB) adds 2; one that differs subtracts 3 (so `A100 40GB` and `H100 NVL 94GB` find
//!   their variants);
//! * the best-scoring entry wins when its score is positive and no other entry has the same score.

use super::system::CatalogSystem;

/// Lowered tokens of a text, with `<number> GB` / `<number> GiB` joined into one token.
fn tokens(text: &str) -> Vec<String> {
    let mut raw: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.to_lowercase().chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let decimal_point = c == '.'
            && cur.chars().last().is_some_and(|p| p.is_ascii_digit())
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if c.is_alphanumeric() || decimal_point {
            cur.push(c);
        } else if !cur.is_empty() {
            raw.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        raw.push(cur);
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for t in raw {
        let unit = matches!(t.as_str(), "gb" | "gib");
        match out.last_mut() {
            Some(prev) if unit && prev.parse::<f64>().is_ok() => prev.push_str(&t),
            _ => out.push(t),
        }
    }
    out
}

/// Capacities stated in the tokens, in GB as written (`96gb` → 96, `95gib` → 95 GiB = 102.0 GB,
/// returned with whether it was GiB).
fn capacities(tokens: &[String]) -> Vec<(f64, bool)> {
    tokens
        .iter()
        .filter_map(|t| {
            let (num, gib) = match t.strip_suffix("gib") {
                Some(n) => (n, true),
                None => (t.strip_suffix("gb")?, false),
            };
            num.parse::<f64>().ok().filter(|x| *x > 0.0).map(|x| (x, gib))
        })
        .collect()
}

/// Whether `needle` occurs in `hay` as consecutive tokens.
fn contains_run(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// How well `text_tokens` names `sys` (see the module documentation); 0 or less = not at all.
fn score(sys: &CatalogSystem, text_tokens: &[String]) -> i64 {
    let id_words = sys.id.replace('_', " ");
    let names = [sys.id.as_str(), id_words.as_str(), sys.name.as_str()];
    let best = names
        .into_iter()
        .chain(sys.aliases.iter().map(String::as_str))
        .map(tokens)
        .filter(|a| contains_run(text_tokens, a))
        .map(|a| a.len() as i64)
        .max()
        .unwrap_or(0);
    if best == 0 {
        return 0;
    }
    let memory = match sys.memory_gb {
        Some(m) => capacities(text_tokens).iter().fold(0, |acc, &(x, gib)| {
            let x_gb = if gib { x * 1.073_741_824 } else { x };
            // A figure written in GB may be the GiB count (TPU documentation), and vice versa.
            let near = |a: f64, b: f64| (a - b).abs() <= 0.04 * b;
            if near(x_gb, m) || near(x, m) || near(x * 1.073_741_824, m) || near(x / 1.073_741_824, m) {
                acc.max(2)
            } else {
                acc.min(-3)
            }
        }),
        None => 0,
    };
    best + memory
}

/// The system of `systems` that `text` names, if one is named unambiguously (see the module
/// documentation for the rules).
pub fn system_named_in<'a>(text: &str, systems: &'a [CatalogSystem]) -> Option<&'a CatalogSystem> {
    let t = tokens(text);
    let mut scored: Vec<(i64, &CatalogSystem)> =
        systems.iter().map(|s| (score(s, &t), s)).filter(|(sc, _)| *sc > 0).collect();
    crate::sort::sort_by(&mut scored, |a, b| b.0.cmp(&a.0));
    match scored.as_slice() {
        [] => None,
        [(best, s), rest @ ..] => rest.first().is_none_or(|(second, _)| second < best).then_some(*s),
    }
}

/// [`system_named_in`] over the compiled-in catalog.
pub fn find_system_named(text: &str) -> Option<&'static CatalogSystem> {
    system_named_in(text, super::systems())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Option<&'static str> {
        find_system_named(text).map(|s| s.id.as_str())
    }

    #[test]
    fn tokens_join_capacities() {
        assert_eq!(tokens("H100 SXM 96GB"), ["h100", "sxm", "96gb"]);
        assert_eq!(tokens("MI300X (192 GB HBM3)"), ["mi300x", "192gb", "hbm3"]);
        assert_eq!(tokens("'95 GiB' usable"), ["95gib", "usable"]);
        assert_eq!(capacities(&tokens("95 GiB, 1.5 GB")), [(95.0, true), (1.5, false)]);
    }

    #[test]
    fn hardware_of_the_measured_files() {
        let cases = [
            (
                "NVIDIA H100 SXM 96GB HBM2e at 500 W (Meta Grand Teton; '95 GiB' usable), 8 GPUs/host",
                "nvidia_h100_sxm_96gb_hbm2e_500w",
            ),
            ("8x AMD Instinct MI300X (192 GB HBM3)", "amd_mi300x"),
            ("NVIDIA A100 80GB (Jean Zay, 8 GPUs/node)", "nvidia_a100_sxm4_80gb"),
            ("NVIDIA A100-SXM4-40GB x4 per node", "nvidia_a100_sxm4_40gb"),
            ("NVIDIA H100 (80GB presumed)", "nvidia_h100_sxm5_80gb"),
            ("8x NVIDIA H100 (variant not stated)", "nvidia_h100_sxm5_80gb"),
            ("NVIDIA H100 NVL 94GB", "nvidia_h100_nvl_94gb"),
            ("H100 PCIe", "nvidia_h100_pcie_80gb"),
            ("NVIDIA GB200 NVL72 (186GB/GPU, 72-GPU NVLink domain)", "nvidia_gb200_nvl72"),
            ("NVIDIA GB300 NVL72 (~288GB HBM3e/GPU from memory)", "nvidia_gb300_nvl72"),
            ("NVIDIA B300 (DGX-B300, 8-GPU NVLink5 nodes; ~288GB HBM3e)", "nvidia_b300_hgx"),
            ("NVIDIA B200 180GB (DGX-B200, 8-GPU NVLink5 nodes)", "nvidia_b200_hgx"),
            ("H800 cluster (DeepSeek-V3)", "nvidia_h800_sxm5_80gb"),
            ("Google TPU v5p (95GB HBM, 1 JAX device per chip)", "google_tpu_v5p"),
            ("Cloud TPU v5e (v5litepod-256)", "google_tpu_v5e"),
            ("Trillium pods", "google_tpu_v6e"),
            ("TPU7x Ironwood superpod", "google_tpu7x_ironwood"),
            ("Intel Gaudi 2 HLS", "intel_gaudi2"),
            ("Gaudi3", "intel_gaudi3"),
            ("AMD Instinct MI250X (Frontier)", "amd_mi250x"),
        ];
        for (text, want) in cases {
            assert_eq!(id(text), Some(want), "{text}");
        }
        assert_eq!(id("a cluster of CPUs"), None);
        assert_eq!(id(""), None);
    }
}

//! Accelerators named in words ("H100 SXM 96GB HBM2e", "8x AMD Instinct MI300X (192 GB)", "TPU
//! v5p", "Trillium"), mapped to the hardware catalog by meaning, using the catalog's own ids and
//! names (so parts the catalog gains are found without a change here).
//!
//! 1. **Family.** Each catalog id is `vendor_family_variant…` (`nvidia_h100_sxm5_80gb`,
//!    `google_tpu_v5e`, `amd_mi300x`, `intel_gaudi2`). The family key is the id's segments after
//!    the vendor up to the first variant segment (form factor, memory, power, system), joined
//!    (`h100`, `tpuv5e`, `mi300x`, `gaudi2`, `gb200`, `tpu7xironwood`), plus each of those
//!    segments that holds a digit or is a name (`v5e`, `ironwood`). The text matches a family
//!    when the key equals one of its tokens or two or three consecutive tokens joined (`tpu v5p`,
//!    `gaudi 3`), or begins a token followed by a letter (`h100sxm5`). The longest match wins
//!    (`gb200` before `b200`). A few names that are not in ids are aliases, each with its
//!    source: Trillium = TPU v6e (Google Cloud, 2024), "v5 lite"/"v5litepod" = TPU v5e (the Cloud
//!    TPU API name).
//! 2. **Variant.** Among the family's entries, the one whose memory capacity matches a capacity
//!    in the text (±4 %, GiB converted), then the most variant segments of its id found in the
//!    text (`sxm`, `pcie`, `hbm2e`, `500w`, `nvl72`); ties go to the catalog's first entry, and
//!    the note says the variant was not stated. A form factor the words name (`PCIe`, `SXM`, `NVL`,
//!    `OAM`) that the chosen entry does not have is said in the note (the catalog lacks that
//!    variant). A capacity written in GB that is the part's GiB count (`96GB` for 96 GiB) matches.
//! 3. **Instance.** Cloud instances and vendor nodes (`p5.48xlarge`, `A3 Mega`, `ND H100 v5`,
//!    `DGX H100`, `trn2.48xlarge`; the table with its sources is [`crate::catalog::instances`])
//!    name their part: it is read when the words name no part, or name the instance's family (a
//!    stated capacity of another variant of that family still wins). The instance's scale-out
//!    bandwidth per device and its scale-up domain are returned where they differ from the part's
//!    defaults ([`HardwareReading`]). Words that name another family than the instance holds keep
//!    the named part, and the note says the instance was not applied.
//!
//! A catalog id given as such is used as it is; an id that is not in the catalog is read as words.

use super::words::Words;
use crate::catalog::instances::{INSTANCES, Instance, PROVIDER_WORDS};
use crate::catalog::{self, CatalogSystem};
use crate::vocab::Note;

/// Segments of an id that describe a variant, not a family.
fn is_variant_segment(s: &str) -> bool {
    let stripped = s.trim_end_matches(|c: char| c.is_ascii_digit());
    matches!(stripped, "sxm" | "pcie" | "nvl" | "hgx" | "dgx" | "oam" | "hbm" | "hbm2e" | "hbm3" | "hbm3e" | "mxm")
        || s.ends_with("gb") && s[..s.len() - 2].chars().all(|c| c.is_ascii_digit())
        || s.ends_with('w') && s[..s.len() - 1].chars().all(|c| c.is_ascii_digit()) && s.len() > 1
        || s.starts_with("hbm")
        || s.starts_with("nvl")
}

/// Family keys of a catalog entry (see the module documentation).
fn family_keys(sys: &CatalogSystem) -> Vec<String> {
    let segs: Vec<&str> = sys.id.split(['_', '-']).collect();
    if segs.len() < 2 || sys.id.starts_with("ref") {
        return Vec::new();
    }
    let family: Vec<&str> = segs[1..].iter().take_while(|s| !is_variant_segment(s)).copied().collect();
    let mut keys = vec![family.concat()];
    for s in &family {
        let named = s.len() >= 5 && !matches!(*s, "instinct" | "nvidia" | "google");
        if (s.chars().any(|c| c.is_ascii_digit()) || named) && !keys.iter().any(|k| k == s) {
            keys.push(s.to_string());
        }
    }
    keys.retain(|k| k.len() >= 2);
    keys
}

/// The family of a catalog entry (`h100` for `nvidia_h100_sxm5_80gb`, `tpuv5e`, `mi300x`).
pub fn family_key(sys: &CatalogSystem) -> String {
    family_keys(sys).into_iter().next().unwrap_or_default()
}

/// Names in use that are not in the catalog's ids: `(alias tokens joined, family key)`.
const ALIASES: [(&str, &str); 6] = [
    // Google Cloud, "Introducing Trillium, sixth-generation TPUs" (2024): Trillium is TPU v6e.
    ("trillium", "tpuv6e"),
    // Cloud TPU API accelerator types `v5litepod-N` are TPU v5e.
    ("v5litepod", "tpuv5e"),
    ("v5lite", "tpuv5e"),
    ("tpuv5lite", "tpuv5e"),
    // NVIDIA's GB200 NVL72 is marketed as "Grace Blackwell".
    ("graceblackwell", "gb200"),
    // AWS Neuron documentation calls the first-generation chip plainly "Trainium" (Trn1).
    ("trainium", "trainium1"),
];

/// Length of the family match of `key` in the text's tokens (0 = none).
fn match_len(tokens: &[String], key: &str) -> usize {
    for i in 0..tokens.len() {
        let mut joined = String::new();
        for t in tokens.iter().skip(i).take(3) {
            joined.push_str(t);
            if joined == key {
                return key.len();
            }
            if joined.len() > key.len() {
                break;
            }
        }
        // A key at the start of a token, followed by a letter (`h100sxm5`, not `h1000`).
        let t = &tokens[i];
        if t.len() > key.len() && t.starts_with(key) && t[key.len()..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            // "b200" must not match inside "gb200" (it does not: tokens start there), and a
            // memory suffix like "h100-80gb" is split into tokens already.
            return key.len();
        }
    }
    0
}

/// Capacities the text states [GB] (GiB converted).
fn capacities_gb(w: &Words) -> Vec<f64> {
    w.numbers()
        .into_iter()
        .filter_map(|(v, u)| match u.as_str() {
            "gb" => Some(v),
            "gib" => Some(v * 1.073_741_824),
            _ => None,
        })
        .filter(|v| *v >= 4.0)
        .collect()
}

/// What hardware words say: the catalog part and what the named build changes about it.
#[derive(Debug, Clone, PartialEq)]
pub struct HardwareReading {
    /// The catalog entry.
    pub system: &'static CatalogSystem,
    /// Scale-out bandwidth per device [GB/s, one direction] of the named instance, when it differs
    /// from the part's catalog figure.
    pub scale_out_gbps: Option<f64>,
    /// The scale-out fabric of the named instance (EFA for AWS P5), when its source names one
    /// and the instance's part is the one read.
    pub fabric: Option<crate::catalog::FabricKind>,
    /// Scale-up domain [devices] of the named build, when it differs from the part's default.
    pub domain: Option<u64>,
    /// How the words were read, when not exactly.
    pub note: Option<Note>,
}

/// Where the instance name `phrase` occurs in `tokens` (the range of tokens it covers):
/// consecutive tokens; a one-token name also matches an instance type with its size (`p5` in
/// `p5.48xlarge`). A bare short name of an instance that [`Instance::needs_context`] counts only
/// next to a provider word, an instance size or a machine-type word.
fn instance_phrase_in(tokens: &[String], phrase: &str, needs_context: bool) -> Option<std::ops::Range<usize>> {
    let want: Vec<&str> = phrase.split(' ').collect();
    let sized = |t: &str| t.strip_prefix(want[0]).is_some_and(|rest| rest.starts_with('.'));
    let i = (0..tokens.len()).find(|&i| {
        want.len() == 1 && sized(&tokens[i])
            || tokens.len() >= i + want.len() && want.iter().zip(&tokens[i..]).all(|(a, b)| a == b)
    })?;
    let range = i..i + want.len();
    if !needs_context || want.len() > 1 || sized(&tokens[i]) {
        return Some(range);
    }
    let context = tokens
        .iter()
        .any(|t| PROVIDER_WORDS.contains(&t.as_str()) || t.ends_with("xlarge") || t.ends_with("gpu") && t.len() > 3);
    context.then_some(range)
}

/// The instance or node the words name, with the name that matched and the tokens it covers
/// (table order: the most specific first).
fn named_instance(w: &Words) -> Option<(&'static Instance, &'static str, std::ops::Range<usize>)> {
    INSTANCES.iter().find_map(|i| {
        i.names.iter().find_map(|n| instance_phrase_in(&w.tokens, n, i.needs_context).map(|r| (i, *n, r)))
    })
}

/// Form factors the words name that `sys` does not have (neither in its id nor its form factor).
fn missing_form_factors(w: &Words, sys: &CatalogSystem) -> Vec<String> {
    let own = format!("{} {}", sys.id, sys.form_factor.as_deref().unwrap_or("")).to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for t in &w.tokens {
        let base = t.trim_end_matches(|c: char| c.is_ascii_digit());
        if matches!(base, "pcie" | "sxm" | "nvl" | "oam") && !own.contains(base) && !out.iter().any(|o| o == base) {
            out.push(base.to_string());
        }
    }
    out
}

/// Maps a hardware description to a catalog system: the entry and, when the reading was not
/// exact, a note. `Err` says that no catalog part is named. ([`read_hardware_words`] also returns
/// what a named instance changes.)
pub fn read_hardware(text: &str) -> Result<(&'static CatalogSystem, Option<Note>), UnreadHardware> {
    read_hardware_words(text).map(|r| (r.system, r.note))
}

/// Why hardware words map to no catalog part.
#[derive(Debug, Clone, PartialEq)]
pub enum UnreadHardware {
    /// The words (`text`) name no accelerator of the catalog.
    NoPart {
        /// The words as given.
        text: String,
    },
    /// A named instance's part is not in the catalog (the instance table names a wrong id).
    InstanceTable(crate::Error),
}

impl std::fmt::Display for UnreadHardware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnreadHardware::NoPart { text } => write!(f, "hardware `{text}`: no accelerator of the catalog is named"),
            UnreadHardware::InstanceTable(e) => write!(f, "instance table: {e}"),
        }
    }
}

impl std::error::Error for UnreadHardware {}

/// Reads hardware words (see the module documentation): the part, the named instance's figures
/// where they differ from the part's, and a note.
pub fn read_hardware_words(text: &str) -> Result<HardwareReading, UnreadHardware> {
    let exact = |system| HardwareReading { system, scale_out_gbps: None, fabric: None, domain: None, note: None };
    if let Some(s) = catalog::systems().iter().find(|s| s.id == text.trim()) {
        return Ok(exact(s));
    }
    let w = Words::new(text);
    let Some((inst, name, covered)) = named_instance(&w) else {
        let (system, mut note) = read_part(text, &w)?;
        let missing = missing_form_factors(&w, system);
        if !missing.is_empty() {
            let said = format!(
                "the words name a {} variant that the catalog lacks for this part; read as {}",
                missing.join("/").to_ascii_uppercase(),
                system.id
            );
            note = Some(match note {
                Some(n) => format!("{n}; {said}"),
                None => format!("hardware `{text}`: {said}"),
            });
        }
        return Ok(HardwareReading { note: note.map(Note::reading), ..exact(system) });
    };
    let held = crate::resolve::builtin_system(inst.part).map_err(UnreadHardware::InstanceTable)?;
    // The part named by the words other than the instance's name (`v4` of `ND96asr_v4` is not TPU v4).
    let rest: Vec<&str> =
        w.tokens.iter().enumerate().filter(|(i, _)| !covered.contains(i)).map(|(_, t)| t.as_str()).collect();
    let part = read_part(text, &Words::new(&rest.join(" ")));
    let what = format!("{} {} ({})", inst.provider, name.to_ascii_uppercase(), inst.source);
    let system = match &part {
        Err(_) => held,
        Ok((named, _)) if family_key(named) != family_key(held) => {
            let note = format!(
                "hardware `{text}`: the words name {} but the {what} holds {}; read as {} without the instance's figures",
                named.id, held.id, named.id
            );
            return Ok(HardwareReading { note: Some(Note::reading(note)), ..exact(named) });
        }
        Ok((named, _)) => {
            // A stated capacity of another variant of the family wins over the instance's variant
            // (any stated capacity: a node's total may come first, `DGX A100 320GB (8x A100 40GB)`).
            let caps = capacities_gb(&w);
            let fits = |s: &CatalogSystem| caps.iter().any(|c| capacity_fits(s.memory_gb, Some(*c)) == Some(true));
            if named.id != held.id && fits(named) && !fits(held) { named } else { held }
        }
    };
    let nic = inst.nic_gbit_per_device / 8.0;
    let scale_out_gbps = (system.id == held.id && system.scale_out.nic_gbps_per_device != Some(nic)).then_some(nic);
    let domain = inst.domain.filter(|d| system.id == held.id && *d != system.scale_up.domain_size);
    let mut said = vec![format!("hardware `{text}` read as {}: {what}", system.id)];
    if let Some(v) = scale_out_gbps {
        said.push(format!("scale-out {v} GB/s per device ({} Gb/s) from the instance", inst.nic_gbit_per_device));
    }
    if let Some(d) = domain {
        said.push(format!("scale-up domain {d} devices from the instance"));
    }
    if system.id != held.id {
        said.push(format!("the stated capacity names {} rather than the instance's {}", system.id, held.id));
    }
    let fabric = inst.fabric.filter(|_| system.id == held.id);
    Ok(HardwareReading { system, scale_out_gbps, fabric, domain, note: Some(Note::reading(said.join("; "))) })
}

/// Whether a stated capacity [GB] is the part's (±4 %, or its GiB count written as GB); `None`
/// when either is unknown.
fn capacity_fits(part_gb: Option<f64>, stated_gb: Option<f64>) -> Option<bool> {
    let (m, c) = (part_gb?, stated_gb?);
    Some((m / c - 1.0).abs() <= 0.04 || (m / (c * 1.073_741_824) - 1.0).abs() <= 0.04)
}

/// Steps 1 and 2 of the module documentation: the family and its variant.
fn read_part(text: &str, w: &Words) -> Result<(&'static CatalogSystem, Option<String>), UnreadHardware> {
    let all = catalog::systems();
    let compact: Vec<String> = w.tokens.clone();
    // 1. Family.
    let mut best: (usize, Vec<&'static CatalogSystem>) = (0, Vec::new());
    for sys in all.iter().filter(|s| s.preset.is_none()) {
        let mut len = family_keys(sys).iter().map(|k| match_len(&compact, k)).max().unwrap_or(0);
        for (alias, family) in ALIASES {
            if family_keys(sys).first().is_some_and(|k| k == family) && match_len(&compact, alias) > 0 {
                len = len.max(alias.len());
            }
        }
        if len > best.0 {
            best = (len, vec![sys]);
        } else if len > 0 && len == best.0 {
            best.1.push(sys);
        }
    }
    let family = best.1;
    if family.is_empty() {
        return Err(UnreadHardware::NoPart { text: text.to_string() });
    }
    // 2. Variant.
    let caps = capacities_gb(w);
    let joined: String = compact.concat();
    let score = |s: &CatalogSystem| -> (i64, i64) {
        // The first capacity stated is the part's; a later one (a usable figure, the label in
        // brackets) may name it too.
        let fits: Vec<Option<bool>> = caps.iter().map(|c| capacity_fits(s.memory_gb, Some(*c))).collect();
        let cap = match fits.first().copied().flatten() {
            Some(true) => 2,
            _ if fits.contains(&Some(true)) => 1,
            Some(false) => -2,
            None => 0,
        };
        let segs =
            s.id.split('_')
                .skip(1)
                .filter(|seg| is_variant_segment(seg))
                .filter(|seg| {
                    let base = seg.trim_end_matches(|c: char| c.is_ascii_digit());
                    let base = if base.is_empty() || seg.ends_with("gb") || seg.ends_with('w') { seg } else { base };
                    joined.contains(base)
                })
                .count() as i64;
        (cap, segs)
    };
    let mut ranked: Vec<(usize, &CatalogSystem)> = family.iter().copied().enumerate().collect();
    crate::sort::sort_by(&mut ranked, |(ia, a), (ib, b)| score(b).cmp(&score(a)).then(ia.cmp(ib)));
    let (_, chosen) = ranked[0];
    let tie = ranked.get(1).is_some_and(|(_, b)| score(b) == score(chosen));
    let note = if score(chosen).0 < 0 {
        Some(format!(
            "hardware `{text}`: no catalog entry of this family has the stated capacity; read as {}{}",
            chosen.id,
            if tie { " (the catalog's first of its family)" } else { "" }
        ))
    } else if family.len() > 1 && tie {
        Some(format!(
            "hardware `{text}`: variant not stated, read as {} (the catalog's first of its family)",
            chosen.id
        ))
    } else {
        Some(format!("hardware `{text}` read as {}", chosen.id))
    };
    Ok((chosen, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(t: &str) -> String {
        read_hardware(t).map(|(s, _)| s.id.clone()).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn words_map_to_catalog_ids() {
        assert_eq!(id("nvidia_h100_sxm5_80gb"), "nvidia_h100_sxm5_80gb");
        assert_eq!(id("NVIDIA H100 SXM 96GB HBM2e at 500 W (Meta Grand Teton)"), "nvidia_h100_sxm_96gb_hbm2e_500w");
        assert_eq!(id("8x NVIDIA H100 (variant not stated)"), "nvidia_h100_sxm5_80gb");
        assert_eq!(id("H100 PCIe"), "nvidia_h100_pcie_80gb");
        assert_eq!(id("8x AMD Instinct MI300X (192 GB HBM3)"), "amd_mi300x");
        assert_eq!(id("TPU v5p"), "google_tpu_v5p");
        assert_eq!(id("Cloud TPU v5litepod-256"), "google_tpu_v5e");
        assert_eq!(id("A100-SXM4-40GB"), "nvidia_a100_sxm4_40gb");
        assert_eq!(id("NVIDIA A100 80GB (Jean Zay)"), "nvidia_a100_sxm4_80gb");
        assert_eq!(id("GB200 NVL72"), "nvidia_gb200_nvl72");
        assert_eq!(id("DGX B200"), "nvidia_b200_hgx");
        assert_eq!(id("Gaudi 3"), "intel_gaudi3");
        assert!(id("a toaster").contains("no accelerator"));
    }

    #[test]
    fn a_later_capacity_may_name_the_part() {
        // A usable figure first, the product's label later: the label names the part, and the
        // note does not claim that no entry has the stated capacity.
        let (s, note) = read_hardware("128 H100 with 94 GiB memory (Grand Teton, 96GB HBM2e)").unwrap();
        assert_eq!(s.id, "nvidia_h100_sxm_96gb_hbm2e_500w");
        assert!(!note.map(|n| n.text).unwrap_or_default().contains("no catalog entry"));
        // A capacity no entry of the family has is still said.
        let (_, note) = read_hardware("H100 with 400 GB").unwrap();
        assert!(
            note.map(|n| n.text)
                .unwrap_or_default()
                .contains("no catalog entry of this family has the stated capacity")
        );
    }
}

//! The part a measured run ran on and the fast domain it occupies: the catalog entry its
//! `hardware_id` names (a catalog id, or the CLI's system spec `ID,key=value,…`), else the part its
//! words name ([`super::hardware_words`]), with the mapping choices the row gives (scale-out
//! bandwidth in GB/s per device, the fabric its words or named instance state,
//! [`super::fabric_words`]); and the devices per fast domain for the run (a slice, the whole run,
//! or the largest share of the job that fits a domain).

use super::hardware_words::read_hardware_words;
use super::reason::RowReason;
use super::schema::MeasuredRun;
use crate::Error;
use crate::catalog::{CatalogSystem, MappingOptions};
use crate::vocab::Note;

/// The scale-out fabric a row states: the kind its words name (`EFA`, `4 x 100 Gb/s RoCE`), else
/// a named instance's (`p5.48xlarge`: EFA); `None` keeps the part's catalog fabric. Words that
/// name two fabrics, or another fabric than the named instance has, are an error naming
/// `hardware` and both kinds: which network the run used is the row's to say.
fn stated_fabric(
    words: &str,
    instance: Option<crate::catalog::FabricKind>,
) -> Result<Option<crate::catalog::Fabric>, RowReason> {
    let contradiction = |rule: String| RowReason::Configuration(Error::invalid("hardware", words, rule));
    let kind = match (super::fabric_words::fabric_kinds(words).as_slice(), instance) {
        ([], instance) => instance,
        ([one], None) => Some(*one),
        ([one], Some(inst)) if one.join(inst).is_some() => one.join(inst),
        ([one], Some(inst)) => {
            return Err(contradiction(format!(
                "names a {} scale-out fabric, but the named instance's is {}",
                one.name(),
                inst.name()
            )));
        }
        (several, _) => {
            let names: Vec<&str> = several.iter().map(|k| k.name()).collect();
            return Err(contradiction(format!(
                "names {} scale-out fabrics ({}): state the one the run used",
                several.len(),
                names.join(", ")
            )));
        }
    };
    Ok(kind.map(crate::catalog::Fabric::of_kind))
}

/// The catalog part of a row with the mapping choices its `hardware_id` gives in the CLI's system
/// spec (`google_tpu_v4,scale_out=6.25`), or that a named instance implies (its scale-out
/// bandwidth per device), the part's scale-up domain for this row (a named build's, e.g. a Trn2
/// UltraServer's 64, else the catalog's), and a note when the part was read from words.
pub(super) fn hardware_of(
    run: &MeasuredRun,
) -> Result<(&'static CatalogSystem, MappingOptions, u64, Option<Note>), RowReason> {
    if let Some(id) = run.hardware_id.as_deref() {
        if let Ok(s) = crate::resolve::builtin_system(id) {
            let words = run.hardware.as_deref().unwrap_or("");
            let fabric =
                super::fabric_words::scale_out_per_device_gbs(words, super::fabric_words::devices_per_node(words));
            let note = fabric.map(|gbs| {
                Note::reading(format!("scale-out network read from the words: {gbs} GB/s per device")).about("hardware")
            });
            let mapping = MappingOptions {
                scale_out_gbps: fabric,
                fabric: stated_fabric(words, None)?,
                ..MappingOptions::default()
            };
            return Ok((s, mapping, s.scale_up.domain_size, note));
        }
        if id.contains(',')
            && let Ok((s, opts)) = crate::resolve::system_spec(crate::resolve::UserEntries::builtin(), id)
        {
            return Ok((s, MappingOptions { precision: None, ..opts }, s.scale_up.domain_size, None));
        }
    }
    let words = [run.hardware_id.as_deref(), run.hardware.as_deref()];
    let text: Vec<&str> = words.iter().flatten().copied().filter(|t| !t.trim().is_empty()).collect();
    if text.is_empty() {
        return Err(RowReason::HardwareNotStated);
    }
    let words = text.join("; ");
    let r = read_hardware_words(&words)?;
    // A scale-out network the words state (`400 Gb/s RDMA per GPU`, `4 x 100 Gb RoCE per node`
    // with the devices per node stated) when no named instance gave one.
    let fabric = super::fabric_words::scale_out_per_device_gbs(&words, super::fabric_words::devices_per_node(&words));
    let note = match (r.scale_out_gbps, fabric) {
        (None, Some(gbs)) => Some(Note::reading(
            [r.note.map(|n| n.text), Some(format!("scale-out network read from the words: {gbs} GB/s per device"))]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; "),
        )),
        _ => r.note,
    };
    let note = note.map(|n| n.about("hardware"));
    let mapping = MappingOptions {
        scale_out_gbps: r.scale_out_gbps.or(fabric),
        fabric: stated_fabric(&words, r.fabric)?,
        ..MappingOptions::default()
    };
    Ok((r.system, mapping, r.domain.unwrap_or(r.system.scale_up.domain_size), note))
}

/// The fast domain a run of `devices` occupies on a part whose scale-up domain holds
/// `part_domain` devices, with `slices` slices stated (TPU multislice): each slice is one ICI
/// domain of `devices / slices` chips (MaxText's `dcn_*_parallelism` runs across slices over the
/// data-centre network, everything else inside one), and a run no larger than the part's domain
/// sits in one domain (a 192-chip TPU v4 slice is one torus, not 64 chips, `gcd(192, 4096)`, of
/// it; a 64-GPU job inside a 72-GPU NVLink rack is one NVLink domain). A larger run fills
/// domains of the largest size that divides it ([`job_domain`]), as MoE rows are read: a job
/// of 128 or 256 GB200s runs 64 GPUs per NVL72 rack. The note says which reading was taken.
pub(super) fn run_domain(part_domain: u64, devices: u64, slices: Option<u64>) -> (u64, Option<Note>) {
    let part_domain = part_domain.max(1);
    match slices {
        Some(k) if k >= 1 && devices.is_multiple_of(k) && devices / k <= part_domain => {
            let per = devices / k;
            (
                per,
                Some(Note::reading(format!(
                    "{k} slice(s) of {per} devices: each slice is one fast (ICI) domain, joined by the data-centre network"
                ))),
            )
        }
        _ if devices < part_domain => (devices.max(1), None),
        _ => match job_domain(part_domain, devices) {
            d if d == part_domain => (d, None),
            d => (
                d,
                Some(Note::reading(format!(
                    "{devices} devices on domains of {part_domain}: {d} per domain (the largest share dividing the job)"
                ))),
            ),
        },
    }
}

/// The fast-domain size a job of `devices` uses on domains of `domain` devices: the largest
/// divisor of the job that fits in a domain. Megatron-Bridge submits a GB200 job that spans
/// racks with Slurm's `--segment` set to the largest divisor of its node count up to a rack's 18
/// compute trays (`scripts/performance/utils/executors.py` @ 067f987df, lines 168–177; v0.1.0rc4
/// lines 106–111, for jobs over 18 nodes), so 32 or 64 trays of 4 GPUs run 16 trays, 64 GPUs,
/// per NVL72 rack and the job's groups are placed on domains of 64, not 72.
pub(super) fn job_domain(domain: u64, devices: u64) -> u64 {
    (1..=domain.min(devices).max(1)).rev().find(|d| devices.is_multiple_of(*d)).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_occupies_its_slices_or_one_domain() {
        // 2 slices of 192 TPU v4 chips (pod of 4,096): two ICI domains of 192.
        assert_eq!(run_domain(4096, 384, Some(2)).0, 192);
        // One 192-chip slice: one domain of 192 (not gcd(192, 4096) = 64).
        assert_eq!(run_domain(4096, 192, None), (192, None));
        assert_eq!(run_domain(4096, 192, Some(1)).0, 192);
        // GPUs: 64 in a 72-GPU rack share it; 128 on 8-GPU nodes keep the node's domain.
        assert_eq!(run_domain(72, 64, None).0, 64);
        assert_eq!(run_domain(8, 128, None).0, 8);
        // 128 and 256 GB200s on 72-GPU racks: 64 per rack (Slurm segments of 16 trays).
        assert_eq!(run_domain(72, 128, None).0, 64);
        assert!(run_domain(72, 256, None).1.is_some_and(|n| n.contains("64 per domain")));
        assert_eq!(run_domain(72, 144, None), (72, None));
        assert_eq!(job_domain(72, 96), 48);
        // A slice count that does not divide the devices, or slices larger than the part's domain,
        // fall back to the part's domain.
        assert_eq!(run_domain(256, 2048, Some(3)).0, 256);
        assert_eq!(run_domain(256, 2048, Some(2)).0, 256);
    }
}

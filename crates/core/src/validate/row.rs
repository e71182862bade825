//! From a measured run to what each mode evaluates: the row's exact configuration, read field by
//! field, with a global rule (never a per-row or per-source choice) for each thing a source leaves
//! unstated. Each rule applied is recorded in the row's `assumptions`; a row that cannot be
//! evaluated gets the reason.
//!
//! Rules for unstated fields:
//! * micro-batch: `G / (dp · grad_accum)` when accumulation is stated, the whole local batch
//!   `G / dp` when `pp = 1`, else 1 (the smallest bubble, Megatron's usual choice);
//! * global batch: one sequence per replica (`G = dp`) when `pp = 1` (the per-device rate of a
//!   run without pipeline does not depend on it beyond data-parallel overlap); skipped when `pp > 1`;
//! * interleaving stated without a count: 2 virtual stages;
//! * recomputation: none; ZeRO stage: 1 (distributed optimizer); FSDP without a degree: the
//!   whole `dp · cp` group; sequence parallelism: on when `tp > 1`;
//! * KV heads: the query heads; head width `hidden / heads`; vocabulary: no embedding or head;
//! * "fp16/bf16": BF16 where the part has it.

use super::convention::{ConventionShape, Metric, measured_metric};
use super::schema::{Interleave, MeasuredRun};
use crate::catalog::{self, CatalogSystem, MappingOptions, Precision};
use crate::extended::{ExtendedOptions, Hardware, Layout, Recompute, Sharding, Workload};
use crate::reference::Candidate;
use crate::{ModelShape, Strategy, SystemParams};

/// A run ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSetup {
    /// The transformer.
    pub workload: Workload,
    /// The parallel layout, placed innermost-first on the part's scale-up domain.
    pub layout: Layout,
    /// The row's own switches (precision, recomputation, sharding, interleaving) on top of
    /// [`ExtendedOptions::realistic`].
    pub options: ExtendedOptions,
    /// The catalog entry of the hardware.
    pub system: &'static CatalogSystem,
    /// What was measured and its value.
    pub metric: Metric,
    /// The measured value in the metric's unit.
    pub measured: f64,
    /// The shape numbers of the row's FLOP convention.
    pub convention_shape: ConventionShape,
    /// The dense peak used by MFU [TFLOP/s].
    pub mfu_peak_tflops: f64,
    /// The rules applied for unstated fields, in words.
    pub assumptions: Vec<String>,
}

/// Reads the training precision of the linear layers from the row's words.
fn precision(words: &str, sys: &CatalogSystem) -> Option<Precision> {
    let t = words.to_ascii_lowercase();
    let sixteen = if sys.peak_tflops.bf16.is_some() || sys.peak_tflops.fp16.is_none() {
        Precision::Bf16
    } else {
        Precision::Fp16
    };
    if t.contains("fp8") {
        Some(Precision::Fp8)
    } else if t.contains("bf16") || t.contains("fp16") {
        Some(if t.contains("bf16") && !t.contains("fp16") { Precision::Bf16 } else { sixteen })
    } else if t.contains("tf32") {
        Some(Precision::Tf32)
    } else if t.contains("fp32") {
        Some(Precision::Fp32)
    } else {
        None
    }
}

/// Whether the MLP words describe a gated MLP (SwiGLU, GeGLU).
fn gated(words: &str) -> bool {
    let t = words.to_ascii_lowercase();
    !t.contains("non-gated") && (t.contains("glu") || t.contains("gated"))
}

/// The integer that follows `fsdp` in a description (`FSDP 8`, `ICI FSDP = 256 …`), if any.
fn fsdp_degree(words: &str) -> Option<u64> {
    let t = words.to_ascii_lowercase();
    let rest = &t[t.find("fsdp")? + 4..];
    let digits: String = rest.trim_start_matches([' ', '=', ':']).chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// Interprets a run (see the module documentation for the rules); `Err` is the skip reason.
pub fn interpret(run: &MeasuredRun) -> Result<RunSetup, String> {
    let mut notes = Vec::new();
    let m = &run.model;
    let missing: Vec<&str> = [
        ("layers", m.layers),
        ("hidden", m.hidden),
        ("heads", m.heads),
        ("ffn_hidden", m.ffn_hidden),
        ("seq_len", m.seq_len),
    ]
    .into_iter()
    .filter(|(_, v)| v.is_none())
    .map(|(n, _)| n)
    .collect();
    if !missing.is_empty() {
        return Err(format!("model shape not stated: {} unknown", missing.join(", ")));
    }
    let (layers, hidden, heads, ffn, seq) = (
        m.layers.unwrap_or(1),
        m.hidden.unwrap_or(1),
        m.heads.unwrap_or(1),
        m.ffn_hidden.unwrap_or(1),
        m.seq_len.unwrap_or(1),
    );
    let (metric, measured) = measured_metric(run)?;
    let hw_id = run.hardware_id.as_deref().ok_or("hardware_id is null")?;
    let system = catalog::find_system(hw_id).map_err(|e| format!("hardware: {e}"))?;
    let p = &run.parallel;
    if p.ep.is_some_and(|e| e > 1) {
        return Err("expert parallelism (mixture of experts) is not modelled".to_string());
    }
    let (tp, pp, cp) = (p.tp.unwrap_or(1), p.pp.unwrap_or(1), p.cp.unwrap_or(1));
    let dp = p.dp.ok_or("parallel.dp is null")?;
    // Counts come from a file: every product is checked (a huge value skips the row, never panics).
    let product = |v: &[u64]| v.iter().try_fold(1u64, |a, b| a.checked_mul(*b)).filter(|n| *n <= 1 << 40);
    let too_large = || "parallel degrees or batch sizes too large to evaluate".to_string();
    let devices = product(&[tp, pp, cp, dp]).ok_or_else(too_large)?;
    let micro_dp = product(&[dp, run.batch.micro.unwrap_or(1)]).ok_or_else(too_large)?;
    let replicas = product(&[dp, cp]).ok_or_else(too_large)?;
    if let Some(n) = run.num_devices.filter(|n| *n != devices) {
        return Err(format!("num_devices {n} differs from tp·pp·cp·dp = {devices}"));
    }

    let precision_words = run.precision.as_deref().unwrap_or("");
    let precision =
        precision(precision_words, system).ok_or_else(|| format!("precision `{precision_words}` not recognised"))?;

    // Batch.
    let b = &run.batch;
    let global = match b.global {
        Some(g) => g,
        None if pp == 1 => {
            let g = micro_dp;
            notes.push(format!("global batch not stated: {g} (one micro-batch per replica; pp = 1)"));
            g
        }
        None => return Err("global batch not stated and pp > 1 (the pipeline bubble depends on it)".to_string()),
    };
    let mbs = match (b.micro, b.grad_accum) {
        (Some(m), _) => m,
        (None, Some(ga)) => global / product(&[dp, ga]).ok_or_else(too_large)?.max(1),
        (None, None) if pp == 1 => {
            notes.push(format!("micro-batch not stated: the local batch {} (pp = 1)", global / dp.max(1)));
            global / dp.max(1)
        }
        (None, None) => {
            notes.push("micro-batch not stated: 1".to_string());
            1
        }
    };
    let dp_mbs = product(&[dp, mbs]).ok_or_else(too_large)?;
    if mbs == 0 || !global.is_multiple_of(dp_mbs) {
        return Err(format!("global batch {global} is not a multiple of dp·micro-batch = {dp_mbs}"));
    }

    // Model.
    let kv_heads = m.kv_heads.unwrap_or_else(|| {
        notes.push("KV heads not stated: as many as query heads".to_string());
        heads
    });
    let head_dim = m.head_dim.unwrap_or(hidden / heads.max(1));
    if m.vocab.is_none() {
        notes.push("vocabulary not stated: no embedding or output head modelled".to_string());
    }
    let workload = Workload {
        seq_len: seq,
        hidden,
        heads,
        kv_heads,
        head_dim,
        layers,
        ffn_hidden: ffn,
        gated_mlp: m.ffn_type.as_deref().is_some_and(gated),
        vocab: m.vocab,
        moe: None,
        mla: None,
        mtp_layers: 0,
    };
    workload.validate().map_err(|e| format!("model: {e}"))?;

    // Switches of the row.
    let recompute = match p.recompute.as_deref().map(str::to_ascii_lowercase) {
        None => {
            notes.push("recomputation not stated: none".to_string());
            Recompute::None
        }
        Some(t) if t.starts_with("full") => Recompute::Full,
        Some(t) if t.starts_with("selective") => Recompute::Selective,
        Some(t) if t.starts_with("none") || t.starts_with("no ") => Recompute::None,
        Some(t) => return Err(format!("recompute `{t}` not recognised")),
    };
    let (sharding, shard_group) = match (p.zero_stage, p.fsdp.as_deref()) {
        (_, Some(words)) => {
            let group = fsdp_degree(words).map(|n| n.saturating_mul(cp));
            if let Some(z) = group.filter(|z| !replicas.is_multiple_of(*z)) {
                return Err(format!("FSDP shard group {z} does not divide dp·cp = {replicas}"));
            }
            (Sharding::Zero3, group.filter(|z| *z != replicas))
        }
        (Some(0), None) => (Sharding::Ddp, None),
        (Some(1), None) => (Sharding::Zero1, None),
        (Some(2), None) => (Sharding::Zero2, None),
        (Some(3), None) => (Sharding::Zero3, None),
        (Some(z), None) => return Err(format!("zero_stage {z} does not exist")),
        (None, None) => {
            notes.push("ZeRO stage not stated: distributed optimizer (ZeRO-1)".to_string());
            (Sharding::Zero1, None)
        }
    };
    let interleave = match &p.interleave {
        Some(Interleave::Chunks(v)) => *v,
        Some(Interleave::Described(t)) if pp > 1 && t.to_ascii_lowercase().contains("interleav") => {
            notes.push("interleaving stated without a count: 2 virtual stages".to_string());
            2
        }
        _ => 1,
    };
    let options = ExtendedOptions {
        precision,
        recompute,
        sharding,
        shard_group,
        interleave,
        sequence_parallel: p.sequence_parallel.unwrap_or(tp > 1),
        ..ExtendedOptions::realistic()
    };

    let layout = Layout::placed(tp, cp, pp, dp, mbs, global, system.scale_up.domain_size);
    layout.validate(&workload, system.scale_up.domain_size, true).map_err(|e| format!("configuration: {e}"))?;
    let mfu_peak = match precision {
        Precision::Fp8 => system.peak_tflops.fp8,
        _ => system.peak_tflops.bf16.or(system.peak_tflops.fp16),
    };
    let convention_shape = ConventionShape {
        layers: layers as f64,
        hidden: hidden as f64,
        q_width: (heads * head_dim) as f64,
        kv_width: (kv_heads * head_dim) as f64,
        ffn: ffn as f64,
        mlp_matrices: if workload.gated_mlp { 3.0 } else { 2.0 },
        seq: seq as f64,
        vocab: m.vocab.unwrap_or(0) as f64,
        params: m.params_b.map(|b| b * 1e9),
    };
    Ok(RunSetup {
        workload,
        layout,
        options,
        system,
        metric,
        measured,
        convention_shape,
        mfu_peak_tflops: mfu_peak.unwrap_or(0.0),
        assumptions: notes,
    })
}

impl RunSetup {
    /// The part at the row's precision for extended mode (`Err`: why it cannot be priced).
    pub fn hardware(&self) -> Result<Hardware, String> {
        Hardware::from_catalog(
            self.system,
            self.options.precision,
            self.options.measured_ceiling,
            &MappingOptions::default(),
        )
        .map_err(|e| format!("hardware: {e}"))
    }

    /// What reference mode evaluates for this row: the reference's shape (no GQA, gate or
    /// vocabulary), the part mapped at 16 bits (the reference has no FP8 path: FP8 runs are priced
    /// at the BF16 rate), strategy `1d` (or `2d-seqp` with context parallelism) with the same
    /// placement. `Err`: why the reference cannot evaluate it.
    pub fn reference(&self) -> Result<(ModelShape, SystemParams, Candidate), String> {
        let p16 = match self.options.precision {
            Precision::Fp8 => None,
            p => Some(p),
        };
        let mapped =
            catalog::to_system_params(self.system, &MappingOptions { precision: p16, ..MappingOptions::default() })
                .map_err(|e| format!("reference mode cannot map the hardware: {e}"))?;
        let l = &self.layout;
        let strategy = if l.cp > 1 { Strategy::ContextParallel2D } else { Strategy::OneD };
        let c = Candidate {
            strategy,
            dp: l.dp,
            tp1: l.tp,
            tp2: l.cp,
            pp: l.pp,
            mbs: l.mbs,
            nb: 1,
            nv_tp1: l.placement.tp,
            nv_tp2: l.placement.cp,
            nv_dp: l.placement.dp,
            nv_pp: l.placement.pp,
        };
        let shape = self.workload.to_shape();
        c.check(&shape, &mapped.params, l.global_batch)
            .map_err(|e| format!("reference mode cannot evaluate it: {e}"))?;
        Ok((shape, mapped.params, c))
    }

    /// A one-line description of the configuration.
    pub fn describe(&self) -> String {
        let l = &self.layout;
        let w = &self.workload;
        let o = &self.options;
        let mut s = format!(
            "L{} h{} a{}/{} f{}{} s{} · tp{} pp{} dp{} cp{} · G{} mbs{} · {} · rc {} · {}",
            w.layers,
            w.hidden,
            w.heads,
            w.kv_heads,
            w.ffn_hidden,
            if w.gated_mlp { " gated" } else { "" },
            w.seq_len,
            l.tp,
            l.pp,
            l.dp,
            l.cp,
            l.global_batch,
            l.mbs,
            o.precision,
            o.recompute,
            o.sharding,
        );
        if let Some(z) = o.shard_group {
            s.push_str(&format!(" (shard {z})"));
        }
        if o.interleave > 1 {
            s.push_str(&format!(" · vpp {}", o.interleave));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_read() {
        assert!(gated("swiglu"));
        assert!(!gated("squared-relu (non-gated)"));
        assert!(!gated("gelu_4h (MPT, no bias, ALiBi/flash)"));
        assert_eq!(fsdp_degree("FSDP 8"), Some(8));
        assert_eq!(fsdp_degree("ICI FSDP = 256 within slice; DCN data parallel = 8"), Some(256));
        assert_eq!(fsdp_degree("FSDP FULL_SHARD (ZeRO-3-like) across all GPUs"), None);
        assert_eq!(fsdp_degree("FSDP (1D)"), None);
        let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let v100 = catalog::find_system("nvidia_v100_sxm2").unwrap();
        assert_eq!(precision("fp8 linears (Float8) + bf16", h100), Some(Precision::Fp8));
        assert_eq!(precision("fp16/bf16 mixed", h100), Some(Precision::Bf16));
        assert_eq!(precision("fp16/bf16 mixed", v100), Some(Precision::Fp16));
        assert_eq!(precision("amp_bf16", h100), Some(Precision::Bf16));
        assert_eq!(precision("int4", h100), None);
    }
}

//! From a measured run to what each mode evaluates: the row's exact configuration, read field by
//! field, its words read by meaning ([`super::words`] and the readers beside it), with a global
//! rule (never a per-row or per-source choice) for each thing a source leaves unstated. Each rule
//! or reading applied is recorded in the row's `assumptions`; a row is not evaluated only when a
//! number it needs is absent, and the reason names that number.
//!
//! Rules for unstated fields:
//! * hardware: `hardware_id` when it is a catalog id (or the CLI's system spec, `ID,key=value,…`,
//!   which can supply a figure the catalog lacks), else the words of `hardware_id` and `hardware`
//!   mapped by [`super::hardware_words`] (a named cloud instance or node also gives its scale-out
//!   bandwidth per device and, for larger NVLink/NeuronLink builds, its domain; else a scale-out
//!   network the words state, [`super::fabric_words`]);
//! * data-parallel size: `num_devices / (tp·pp·cp)` when only the device count is given; when both
//!   are given and disagree, the parallel degrees are evaluated and the note says so;
//! * global batch: `global_batch_tokens / seq_len` when only tokens are given; one micro-batch per
//!   replica (`G = dp·mbs`) when `pp = 1` (the per-device rate of a run without pipeline does not
//!   depend on it beyond data-parallel overlap); absent when `pp > 1` (the bubble depends on it);
//! * micro-batch: `G / (dp · grad_accum)` when accumulation is stated, the whole local batch
//!   `G / dp` when `pp = 1`, else 1 (the smallest bubble, Megatron's usual choice); a global
//!   batch that is not a multiple of `dp·mbs` is rounded to the nearest one, noted;
//! * interleaving stated without a count (in `interleave_vpp` or the parallel words): 2;
//! * recomputation ([`super::recompute_words`]), sharding and precision
//!   ([`super::sharding_words`], [`super::precision_words`], [`super::stack_words`],
//!   [`super::parallel_words`]) read from words, the unstated cases there;
//! * fast domain: one slice (`devices / k`) when the words state `k` slices (`DCN … = k`,
//!   "k slices"), the whole run when it is smaller than the part's scale-up domain, else the
//!   part's domain — the named build's when the words name one ([`super::run_hardware`]);
//! * sequence parallelism: on when `tp > 1`;
//! * kernels: fused unless the words (framework, parallel words, notes) say eager or negate
//!   compilation; attention by the part's own-generation kernel unless those words, the tags or
//!   the source name a FlashAttention-2-class kernel or a framework that calls one
//!   ([`super::kernel_words`]);
//! * KV heads: the query heads; head width `hidden / heads`; vocabulary: no embedding or head.

use super::convention::ConventionShape;
use super::kernel_words::{read_compiled_loss, read_fp8_recipe, read_run_fusion, read_stated_attention_kernel};
use super::metric::{MetricReading, read_metric};
use super::parallel_words::{read_dp_overlap, read_interleave, read_slices, read_stage_split};
use super::precision_words::{StateFacts, read_precision, read_state_facts};
use super::reason::RowReason;
use super::recompute_words::{BlockMatmuls, RecomputeReading, read_recompute_of_block};
use super::run_hardware::{hardware_of, run_domain};
use super::schema::{Interleave, MeasuredRun};
use super::sharding_words::{ShardingInput, ShardingReading, read_sharding};
use super::stack_words::read_grads_freed;
use super::words::Words;
use crate::catalog::{CatalogSystem, MappingOptions, Precision};
use crate::extended::{ExtendedOptions, GradReduce, Hardware, HardwareChoices, Layout, OptimizerStates, Workload};
use crate::vocab::{Note, NoteList};
use crate::{ModelShape, SystemParams};

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
    /// Mapping choices given with the part (`hardware_id` in the CLI's system spec: domain, NICs,
    /// scale-up/scale-out bandwidth, vector rate).
    pub mapping: MappingOptions,
    /// The time figure and how to read it (`None`: the row has no time figure).
    pub metric: Option<MetricReading>,
    /// The shape numbers of the row's FLOP convention.
    pub convention_shape: ConventionShape,
    /// The part's dense peak at the row's precision [TFLOP/s] (0 when the catalog lists none).
    pub mfu_peak_tflops: f64,
    /// The recomputation policy as read.
    pub recompute: RecomputeReading,
    /// What the precision and optimizer words say about model states (for the memory model).
    pub states: StateFacts,
    /// Devices of the degrees per catalog chip (2 for a TPU7x row whose degrees count JAX
    /// devices while `num_devices` counts chips; else 1): each device is that share of a chip
    /// ([`super::device_count`]).
    pub devices_per_chip: u64,
    /// The rules applied for unstated fields and the readings of words, in words.
    pub assumptions: Vec<Note>,
}

/// Whether the MLP words describe a gated MLP (SwiGLU, GeGLU).
fn gated(words: &str) -> bool {
    let w = super::words::Words::new(words);
    let gated_word = w.tokens.iter().any(|t| t.contains("glu") || t == "gated" || t == "swish");
    gated_word && !w.any(&["non gated", "not gated", "ungated"])
}

/// Interprets a run (see the module documentation for the rules); `Err` is the skip reason.
pub fn interpret(run: &MeasuredRun) -> Result<RunSetup, RowReason> {
    let mut notes = Vec::new();
    let m = &run.model;
    let missing: Vec<&'static str> = [
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
        return Err(RowReason::ShapeNotStated { missing });
    }
    let (layers, hidden, heads, ffn, seq) = (
        m.layers.unwrap_or(1),
        m.hidden.unwrap_or(1),
        m.heads.unwrap_or(1),
        m.ffn_hidden.unwrap_or(1),
        m.seq_len.unwrap_or(1),
    );
    let (system, mapping, part_domain, hw_note) = hardware_of(run)?;
    notes.extend(hw_note);
    let p = &run.parallel;
    if p.ep.is_some_and(|e| e > 1) {
        return Err(RowReason::ExpertParallel);
    }
    let (tp, pp, cp) = (p.tp.unwrap_or(1), p.pp.unwrap_or(1), p.cp.unwrap_or(1));
    // Counts come from a file: every product is checked (a huge value skips the row, never panics).
    let product = |v: &[u64]| v.iter().try_fold(1u64, |a, b| a.checked_mul(*b)).filter(|n| *n <= 1 << 40);
    let too_large = || RowReason::TooLarge;
    let model_parallel = product(&[tp, pp, cp]).ok_or_else(too_large)?;
    let dp = match (p.dp, run.num_devices) {
        (Some(d), _) => d,
        (None, Some(n)) if n.is_multiple_of(model_parallel) && n >= model_parallel => {
            notes.assumption(format!("dp not stated: num_devices / (tp·pp·cp) = {}", n / model_parallel));
            n / model_parallel
        }
        (None, _) => return Err(RowReason::DataParallelAbsent),
    };
    let devices = product(&[model_parallel, dp]).ok_or_else(too_large)?;
    // Devices as the degrees count them: two JAX devices per TPU7x chip ([`super::device_count`]).
    let torus = system.architecture == crate::catalog::Architecture::Torus;
    let unit_words = run.hardware.as_deref().unwrap_or("");
    let devices_per_chip = match run.num_devices.filter(|n| *n != devices) {
        None => 1,
        Some(n) => match super::device_count::devices_per_chip(n, devices, torus, unit_words) {
            Some(k) => {
                notes.assumption(format!(
                    "num_devices {n} counts chips, the degrees {devices} devices: {k} devices per chip, each 1/{k} of a chip"
                ));
                k
            }
            None => {
                notes.assumption(format!(
                    "num_devices {n} differs from tp·pp·cp·dp = {devices}: the parallel degrees are evaluated"
                ));
                1
            }
        },
    };

    let (precision, p_note) = read_precision(run.precision.as_deref(), system);
    notes.extend(p_note.map(|n| n.about("precision")));

    // Pipeline schedule: virtual stages per device (the micro-batch default below reads it).
    let other = p.other.join("; ");
    let interleave = match &p.interleave {
        Some(Interleave::Chunks(v)) => *v,
        Some(Interleave::Described(t)) => match read_interleave(t) {
            Some((v, note)) => {
                notes.extend(note.map(|n| n.about("parallel.interleave_vpp")));
                v
            }
            None => 1,
        },
        None => match read_interleave(&other) {
            Some((v, note)) => {
                notes.extend(note.map(|n| n.about("parallel.other")));
                v
            }
            None => {
                if pp > 1 {
                    notes.assumption(format!(
                        "virtual pipeline stages not stated: plain 1F1B, a bubble of {} stage times per iteration",
                        pp - 1
                    ));
                }
                1
            }
        },
    };
    let interleave = if pp > 1 { interleave.max(1) } else { 1 };
    // Batch.
    let b = &run.batch;
    let global = match (b.global, b.global_tokens) {
        (Some(g), _) => g,
        (None, Some(t)) if t >= seq && t.is_multiple_of(seq) => {
            notes.assumption(format!("global batch from tokens: {t} / {seq} = {} sequences", t / seq));
            t / seq
        }
        (None, _) if pp == 1 => {
            let g = product(&[dp, b.micro.unwrap_or(1)]).ok_or_else(too_large)?;
            notes.assumption(format!("global batch not stated: {g} (one micro-batch per replica; pp = 1)"));
            g
        }
        (None, _) => {
            return Err(RowReason::GlobalBatchAbsent);
        }
    };
    let mbs = match (b.micro, b.grad_accum) {
        (Some(m), _) => m,
        (None, Some(ga)) => (global / product(&[dp, ga]).ok_or_else(too_large)?.max(1)).max(1),
        (None, None) if pp == 1 => {
            let local = (global / dp.max(1)).max(1);
            notes.assumption(format!("micro-batch not stated: the local batch {local} (pp = 1)"));
            local
        }
        (None, None) => {
            // torchtitan splits each replica's batch into as many pipeline micro-batches as there
            // are pipeline stages in all unless told otherwise (`pipeline_parallel_microbatches`,
            // torchtitan's config docs: "The default value will be the number of pipeline
            // stages"; its schedule builder counts `pipeline_parallel_degree × stages per rank`,
            // so an interleaved schedule with 2 stages per rank takes twice as many). The
            // framework may be named only by the source. Other stacks: 1.
            let local = (global / dp.max(1)).max(1);
            let stack_words = [
                run.framework.as_deref().unwrap_or(""),
                &run.source,
                run.source_where.as_deref().unwrap_or(""),
                run.source_url.as_deref().unwrap_or(""),
            ]
            .join("; ");
            let stages = pp.saturating_mul(interleave);
            if Words::new(&stack_words).has("torchtitan") && local.is_multiple_of(stages) {
                notes.assumption(format!(
                    "micro-batch not stated: torchtitan's default of {stages} pipeline micro-batches (one per \
                     pipeline stage: {pp} ranks × {interleave} stages each) of the local batch {local}: {}",
                    local / stages
                ));
                local / stages
            } else {
                notes.assumption("micro-batch not stated: 1".to_string());
                1
            }
        }
    };
    let dp_mbs = product(&[dp, mbs]).ok_or_else(too_large)?;
    let global = if global.is_multiple_of(dp_mbs) {
        global
    } else {
        let g = ((global as f64 / dp_mbs as f64).round() as u64).max(1) * dp_mbs;
        notes
            .assumption(format!("global batch {global} is not a multiple of dp·micro-batch = {dp_mbs}: {g} evaluated"));
        g
    };

    // Model.
    let kv_heads = m.kv_heads.unwrap_or_else(|| {
        notes.assumption("KV heads not stated: as many as query heads".to_string());
        heads
    });
    let head_dim = m.head_dim.unwrap_or(hidden / heads.max(1));
    if m.vocab.is_none() {
        notes.assumption("vocabulary not stated: no embedding or output head modelled".to_string());
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
        tied_embeddings: m.tied_embeddings.unwrap_or(false),
        sliding_window: None,
    };
    workload.validate().map_err(RowReason::Model)?;
    notes.extend(workload.alignment_caveat());

    // Switches of the row, read from its words.
    let recompute = read_recompute_of_block(p.recompute.as_deref(), Some(layers), BlockMatmuls::of(&workload));
    notes.extend(recompute.note.clone().map(|n| n.about("parallel.recompute")));
    // ZeRO words may stand in the optimizer text or among the other parallel words
    // (`--use-distributed-optimizer`).
    let state_words = [run.optimizer.as_deref(), Some(other.as_str())]
        .iter()
        .flatten()
        .filter(|t| !t.is_empty())
        .copied()
        .collect::<Vec<&str>>()
        .join("; ");
    let sharding = read_sharding(&ShardingInput {
        fsdp: p.fsdp.as_deref(),
        fsdp_flag: p.fsdp_flag,
        zero_stage: p.zero_stage,
        distributed_optimizer: p.distributed_optimizer,
        optimizer: (!state_words.is_empty()).then_some(state_words.as_str()),
        dp,
        cp,
    });
    notes.extend(sharding.notes.iter().cloned());
    let fsdp_pipelined = pp > 1 && sharding.sharding == crate::extended::Sharding::Zero3;
    let sharding = fsdp_under_pipeline(sharding, pp, &mut notes);
    let states = read_state_facts(run.precision.as_deref(), run.optimizer.as_deref());
    // Execution switches of the memory and time models read from the same words
    // (extended::options): FP16 (loss-scaled) training and Composer's `PURE` policy reduce
    // gradients in 16 bits; torchao's `Float8` is cast on the fly, other FP8 stacks use Transformer
    // Engine; a chunked cross-entropy as its stack chunks it (`loss_words`); async TP overlaps
    // the TP collectives.
    let precision_words = Words::new(run.precision.as_deref().unwrap_or(""));
    let sixteen_bit_grads =
        super::precision_words::says_16bit_grad_reduce(&[other.as_str(), &run.notes.join("; ")].join("; "));
    let hybrid_zero = super::stack_words::reads_hybrid_zero(&Words::new(run.framework.as_deref().unwrap_or("")));
    let sixteen_bit_grads = sixteen_bit_grads || hybrid_zero.is_some();
    let param_broadcast = hybrid_zero.is_some();
    notes.extend(hybrid_zero.map(|n| n.about("framework")));
    let grad_reduce = if (precision_words.any(&["fp16", "float16", "pure"]) || sixteen_bit_grads) && !states.pure_16bit
    {
        GradReduce::Param
    } else {
        GradReduce::Auto
    };
    let other_words = Words::new(&other);
    let kernel_text = [run.framework.as_deref().unwrap_or(""), other.as_str(), &run.notes.join("; ")].join("; ");
    let stack_words = Words::new(&kernel_text);
    let (fusion, fusion_note) = read_run_fusion(&Words::new(run.framework.as_deref().unwrap_or("")), &stack_words);
    notes.extend(fusion_note);
    let (fp8_recipe, fp8_note) = read_fp8_recipe(&precision_words, &stack_words);
    if precision == Precision::Fp8 {
        notes.extend(fp8_note.map(|n| n.about("precision")));
    }
    let (compiled_loss, loss_note) = read_compiled_loss(&stack_words);
    let (tp_grad_overlap, tp_grad_note) = super::kernel_words::read_tp_grad_overlap(&stack_words);
    notes.extend(tp_grad_note.filter(|_| tp > 1));
    notes.extend(loss_note);
    let tokens_per_microbatch = (mbs as f64) * (seq as f64) / (cp.max(1) as f64);
    let loss = super::loss_words::read_loss_chunking(&stack_words, tokens_per_microbatch, m.vocab, hidden)
        .map_err(RowReason::Configuration)?;
    notes.extend(loss.note.clone());
    let (grads_freed, grads_note) = read_grads_freed(&stack_words);
    notes.extend(grads_note);
    let checkpoint = &super::checkpoint_words::CheckpointKeeps::read(&stack_words, &system.id, recompute.level)
        .map_err(RowReason::Configuration)?;
    notes.extend(checkpoint.notes.iter().cloned());
    if states.fp32_params_autocast {
        notes.push(
            Note::reading("autocast over FP32 parameters: FP32 weights and gathers, FP32 residual stream")
                .about("precision"),
        );
    }
    let stage_split = match read_stage_split(&stack_words) {
        Some((rule, note)) if pp > 1 => {
            notes.push(note);
            rule
        }
        _ => crate::extended::StageSplitRule::Blocks,
    };
    // The attention kernel: the same words plus the tags and the source's title and address
    // (a framework is often named only there).
    let attention_text = [
        kernel_text.as_str(),
        &run.tags.join("; "),
        &run.source,
        run.source_where.as_deref().unwrap_or(""),
        run.source_url.as_deref().unwrap_or(""),
    ]
    .join("; ");
    let (attention_kernel, attention_note) =
        read_stated_attention_kernel(p.flash_attention, &Words::new(&attention_text))
            .map_err(RowReason::Configuration)?;
    // torchtitan's SDPA on a B200-class part is cuDNN's (the reading that recomputes it).
    let (attention_kernel, attention_note) = if checkpoint.op_saves_attention {
        (attention_kernel, attention_note)
    } else {
        (crate::extended::AttentionKernel::Native, Some(super::checkpoint_words::cudnn_kernel_note()))
    };
    // The local spec's core attention where the words name no kernel.
    let (spec_stated, spec_note) =
        super::step_words::read_transformer_impl(&other_words).map_err(RowReason::Configuration)?;
    let (attention_kernel, attention_note) =
        super::step_words::spec_attention(spec_stated, attention_kernel, attention_note);
    notes.extend(attention_note);
    let stack_text = [
        run.framework.as_deref().unwrap_or(""),
        &run.tags.join("; "),
        &run.source,
        run.source_where.as_deref().unwrap_or(""),
        run.source_url.as_deref().unwrap_or(""),
    ]
    .join("; ");
    let zero1_2 = matches!(sharding.sharding, crate::extended::Sharding::Zero1 | crate::extended::Sharding::Zero2);
    let (dp_overlap, overlap_note) = read_dp_overlap(&other_words, &Words::new(&stack_text), zero1_2);
    if dp > 1 && sharding.sharding != crate::extended::Sharding::Zero3 {
        notes.extend(overlap_note);
    }
    let (stack, stack_note) = super::stack_words::read_stack(&Words::new(&stack_text));
    // Megatron's ZeRO-3 is Megatron-FSDP: kept only where the words name it.
    let (stack, stack_note) = match sharding.sharding {
        crate::extended::Sharding::Zero3 => {
            let all = [stack_text.as_str(), p.fsdp.as_deref().unwrap_or(""), &kernel_text].join("; ");
            let (s, note) = super::stack_words::read_zero3_stack(stack, &Words::new(&all));
            (s, stack_note.or(note))
        }
        _ => (stack, stack_note),
    };
    // Said where it prices something: FSDP across a switched scale-up domain (a torus part's
    // collectives are priced by its own rule, whatever the stack).
    if dp > 1
        && sharding.sharding == crate::extended::Sharding::Zero3
        && system.architecture != crate::catalog::Architecture::Torus
    {
        notes.extend(stack_note);
    }
    let (log_num_zeros_in_grad, log_params_norm, statistics_note) =
        super::step_words::read_step_statistics(&other_words).map_err(RowReason::Configuration)?;
    notes.extend(statistics_note);
    let (fusion_stated, fusion_note) =
        super::step_words::read_grad_accumulation_fusion(&other_words).map_err(RowReason::Configuration)?;
    notes.extend(fusion_note);
    let (rope_stated, rope_note) =
        super::step_words::read_rope_fusion(&other_words).map_err(RowReason::Configuration)?;
    notes.extend(rope_note);
    notes.extend(spec_note);
    let (hf_trainer_step, trainer_note) =
        super::stack_words::read_hf_trainer_step(&Words::new(run.framework.as_deref().unwrap_or("")));
    notes.extend(trainer_note);
    let (cp_comm, cp_ulysses, cp_note) =
        super::cp_words::read_cp_flavour(&other_words, cp).map_err(RowReason::Configuration)?;
    notes.extend(cp_note);
    let options = ExtendedOptions {
        hardware: HardwareChoices { precision, ..HardwareChoices::realistic() },
        recompute: recompute.level,
        sharding: sharding.sharding,
        shard_group: sharding.shard_group,
        interleave,
        sequence_parallel: p.sequence_parallel.unwrap_or(tp > 1),
        grad_reduce,
        fp8_recipe,
        optimizer_states: if states.pure_16bit { OptimizerStates::PureBf16 } else { OptimizerStates::Fp32Master },
        optimizer_in_backward: states.optimizer_in_backward,
        grads_freed,
        grad_accumulation_buffer: states.fp32_grad_accumulation || fsdp_pipelined,
        loss_chunks: loss.chunks,
        loss_head_chunked: loss.head_inside,
        compiled_loss,
        op_saves_attention: checkpoint.op_saves_attention,
        fp32_params_autocast: states.fp32_params_autocast,
        outputs_hold_kv: checkpoint.outputs_hold_kv,
        tp_comm_overlap: other_words.any(&["async tp", "tp comm overlap"]),
        tp_grad_overlap,
        dp_overlap,
        param_broadcast,
        stack,
        fusion,
        attention_kernel,
        stage_split,
        log_num_zeros_in_grad,
        log_params_norm,
        hf_trainer_step,
        grad_accumulation_fusion: fusion_stated.unwrap_or(true),
        rope_fusion: rope_stated.unwrap_or(true),
        transformer_impl: spec_stated.unwrap_or_default(),
        cp_comm,
        cp_ulysses,
        ..ExtendedOptions::realistic()
    };

    let mut mapping = mapping;
    let domain = match mapping.domain_size {
        Some(d) => d * devices_per_chip,
        None => {
            let slice_words = Words::join(&[p.fsdp.as_deref(), Some(other.as_str())]);
            // (in devices of the degrees: a chip's domain holds `devices_per_chip` times as many)
            let (d, note) = run_domain(part_domain * devices_per_chip, devices, read_slices(&slice_words.text));
            notes.extend(note);
            let chips = (d / devices_per_chip).max(1);
            mapping.domain_size = (chips != system.scale_up.domain_size).then_some(chips);
            chips * devices_per_chip
        }
    };
    let layout = Layout::placed(tp, cp, pp, dp, mbs, global, domain);
    layout.validate(&workload, domain, true).map_err(RowReason::Configuration)?;
    let mfu_peak = match precision {
        Precision::Fp8 => system.peak_tflops.fp8,
        Precision::Tf32 => system.peak_tflops.tf32,
        Precision::Fp32 => system.peak_tflops.fp32_matrix.or(system.peak_tflops.fp32_vector),
        Precision::Fp16 => system.peak_tflops.fp16.or(system.peak_tflops.bf16),
        Precision::Bf16 => system.peak_tflops.bf16.or(system.peak_tflops.fp16),
    };
    let metric = match read_metric(run, mfu_peak) {
        Ok(mut r) => {
            if matches!(r.kind, crate::vocab::MetricKind::Mfu | crate::vocab::MetricKind::Hfu) && r.value > 1.0 {
                r.notes.assumption(format!("{} {} is above 1: read as a percentage", r.kind.key(), r.value));
                r.value /= 100.0;
            }
            notes.extend(r.notes.iter().cloned());
            Some(r)
        }
        Err(_) if run.measured.memory.is_stated() => None,
        Err(e) => return Err(RowReason::NoFigure(Box::new(e))),
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
    let setup = RunSetup {
        workload,
        layout,
        options,
        system,
        mapping,
        metric,
        convention_shape,
        mfu_peak_tflops: mfu_peak.unwrap_or(0.0) / devices_per_chip as f64,
        recompute,
        states,
        devices_per_chip,
        assumptions: notes,
    };
    super::plausible::measured_within_peak(&setup)?;
    Ok(setup)
}

/// FSDP (ZeRO-3) combined with pipeline parallelism gathers each stage's parameters once per
/// iteration and reduce-scatters its gradients once, ZeRO-2's pattern: PyTorch's pipelining (the
/// framework that combines the two, torchtitan) keeps parameters unsharded across micro-batches
/// (`reshard_after_forward = not pp_enabled`; the schedule turns off resharding after backward
/// and gradient sync until the last micro-batch), since per-micro-batch gathers "can be
/// expensive and non-overlapped" (torchtitan `parallelize.py`). Megatron-LM and DeepSpeed do not
/// run ZeRO-3 with pipelining. Without a pipeline the reading is unchanged. With gradient sync off
/// until the last micro-batch, FSDP2 keeps each parameter's unsharded gradient between
/// micro-batches, upcast to the reduce dtype (`FSDPParam.to_accumulated_grad_if_needed`: the
/// FP32 `unsharded_accumulated_grad` of a BF16 / FP32-reduce policy): the caller turns on
/// [`crate::extended::ExtendedOptions::grad_accumulation_buffer`] for it.
fn fsdp_under_pipeline(reading: ShardingReading, pp: u64, notes: &mut Vec<Note>) -> ShardingReading {
    if pp <= 1 || reading.sharding != crate::extended::Sharding::Zero3 {
        return reading;
    }
    notes.assumption(
        "FSDP with pipeline parallelism: parameters gathered and gradients reduce-scattered once per iteration \
         (PyTorch pipelining keeps them unsharded across micro-batches): priced as ZeRO-2, with the stage's \
         unsharded gradients accumulated in the FP32 reduce dtype"
            .to_string(),
    );
    ShardingReading { sharding: crate::extended::Sharding::Zero2, shard_group: None, ..reading }
}

impl RunSetup {
    /// The part at the row's precision for extended mode (`Err`: why it cannot be priced).
    pub fn hardware(&self) -> Result<Hardware, RowReason> {
        crate::resolve::hardware(
            self.system,
            self.options.hardware.precision,
            self.options.hardware.measured_ceiling,
            &self.mapping,
        )
        .map(|(hw, _)| super::device_count::share_of_chip(&hw, self.devices_per_chip))
        .map_err(RowReason::Hardware)
    }

    /// What reference mode evaluates this row with: the reference's shape (no GQA, gate or
    /// vocabulary) and the part mapped at 16 bits (the reference has no FP8 path: FP8 runs are
    /// priced at the BF16 rate). It reads the row's layout as strategy `1d` (or `2d-seqp` with
    /// context parallelism) with the same placement ([`crate::cost::candidate_of_layout`]).
    /// `Err`: why the reference cannot map the part.
    pub fn reference(&self) -> Result<(ModelShape, SystemParams), RowReason> {
        let p16 = match self.options.hardware.precision {
            Precision::Fp8 => None,
            p => Some(p),
        };
        let mapped = crate::resolve::map_system(self.system, &MappingOptions { precision: p16, ..self.mapping })
            .map_err(RowReason::ReferenceCannotMap)?;
        Ok((self.workload.to_shape(), mapped.params))
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
            o.hardware.precision,
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
    fn fsdp_with_a_pipeline_gathers_once_per_iteration() {
        use crate::extended::Sharding;
        let fsdp = ShardingReading { sharding: Sharding::Zero3, shard_group: Some(8), notes: vec![], stated: true };
        let mut notes = vec![];
        let r = fsdp_under_pipeline(fsdp.clone(), 8, &mut notes);
        assert_eq!((r.sharding, r.shard_group, notes.len()), (Sharding::Zero2, None, 1));
        let mut notes = vec![];
        assert_eq!(fsdp_under_pipeline(fsdp.clone(), 1, &mut notes), fsdp);
        let z1 = ShardingReading { sharding: Sharding::Zero1, ..fsdp };
        assert_eq!(fsdp_under_pipeline(z1.clone(), 8, &mut notes), z1);
        assert!(notes.is_empty());
    }

    #[test]
    fn mlp_words() {
        assert!(gated("swiglu"));
        assert!(gated("SwiGLU (gated, 3 matrices)"));
        assert!(!gated("squared-relu (non-gated)"));
        assert!(!gated("gelu_4h (MPT, no bias, ALiBi/flash)"));
        assert!(!gated("relu (non-gated)"));
    }
}

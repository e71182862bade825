//! Megatron-LM flags written fresh: the layout's flags (degrees, batch, virtual stages,
//! recomputation, sharding, sequence parallelism), every flag of a scenario (model shape,
//! vocabulary, experts, precision, layout) and a `torchrun … pretrain_gpt.py` script of them.

use super::{Header, Plan};
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{ExtendedOptions, Fp8Recipe, Recompute, Sharding};
use fmperf_core::vocab::{Note, NoteList};

/// The flags that carry `p` (degrees, batch, virtual stages, recomputation, sharding, sequence
/// parallelism), `--flag value` each.
pub(super) fn layout_flags(p: &Plan, o: &ExtendedOptions, notes: &mut Vec<Note>) -> Vec<String> {
    let _ = o;
    let mut f = vec![
        format!("--tensor-model-parallel-size {}", p.tp),
        format!("--pipeline-model-parallel-size {}", p.pp),
        format!("--context-parallel-size {}", p.cp),
    ];
    if p.moe {
        f.push(format!("--expert-model-parallel-size {}", p.ep));
        f.push(format!("--expert-tensor-parallel-size {}", p.etp));
    }
    if p.vpp > 1 {
        f.push(vpp_flag(p));
    }
    if p.sequence_parallel {
        f.push("--sequence-parallel".into());
    }
    f.push(format!("--micro-batch-size {}", p.mbs));
    f.push(format!("--global-batch-size {}", p.global));
    f.extend(recompute_flags(p.recompute, p, notes));
    f.extend(sharding_flags(p, notes).into_iter().map(str::to_string));
    f
}

/// `--num-layers-per-virtual-pipeline-stage n` when the stages divide the blocks, else the number
/// of virtual stages.
pub(super) fn vpp_flag(p: &Plan) -> String {
    match p.layers_per_virtual_stage() {
        Some(n) => format!("--num-layers-per-virtual-pipeline-stage {n}"),
        None => format!("--num-virtual-stages-per-pipeline-rank {}", p.vpp),
    }
}

/// Megatron's flags for `r`; a partial level is the block method on its share of a model chunk's
/// blocks (at least one; [`super::Plan::block_recompute_layers`]).
pub(super) fn recompute_flags(r: Recompute, p: &super::Plan, notes: &mut Vec<Note>) -> Vec<String> {
    if let Recompute::Partial(s) = r {
        let (k, blocks_per_chunk) = (p.block_recompute_layers(s.fraction()), p.blocks_per_model_chunk());
        notes.not_written(format!(
            "recompute {}: Megatron's block method on {k} of the {blocks_per_chunk} blocks per model chunk",
            s.fraction()
        ));
        return vec![
            "--recompute-granularity full".into(),
            "--recompute-method block".into(),
            format!("--recompute-num-layers {k}"),
        ];
    }
    let flags: Vec<&'static str> = match r {
        Recompute::None => vec![],
        Recompute::Selective => vec!["--recompute-activations"],
        Recompute::Op => {
            notes.not_written(
                "recompute op (torchtitan's operator-level selective checkpointing) has no Megatron flag: the nearest, \
                 Megatron's selective recomputation of the attention core (--recompute-activations), is written"
                    .into(),
            );
            vec!["--recompute-activations"]
        }
        Recompute::Full => {
            vec!["--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1"]
        }
        Recompute::Partial(_) => vec![],
    };
    flags.into_iter().map(str::to_string).collect()
}

pub(super) fn sharding_flags(p: &Plan, notes: &mut Vec<Note>) -> Vec<&'static str> {
    if p.shard_group.is_some() && p.sharding == Sharding::Zero3 {
        notes.not_written(
            "sharding inside groups (HSDP, shard_group) has no Megatron-LM flag: full sharding over the data-parallel \
             group is written"
                .into(),
        );
    }
    match p.sharding {
        Sharding::Ddp => vec![],
        Sharding::Zero1 => vec!["--use-distributed-optimizer"],
        Sharding::Zero2 => vec!["--use-megatron-fsdp", "--data-parallel-sharding-strategy optim_grads"],
        Sharding::Zero3 => vec!["--use-megatron-fsdp", "--data-parallel-sharding-strategy optim_grads_params"],
    }
}

/// A fresh script: `torchrun` with the devices, the model, precision, layout and mock data.
pub(super) fn fresh(h: &Header<'_>, o: &ExtendedOptions, notes: &mut Vec<Note>) -> String {
    let p = h.plan;
    let mut flags = all_flags(h, o, notes);
    flags.push("--mock-data".into());
    let per_node = if p.devices.is_multiple_of(8) { 8 } else { p.devices };
    let mut out = String::from("#!/bin/bash\n");
    for l in h.lines() {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(
        "# Add your data (--data-path), tokenizer, optimizer, schedule and checkpoint flags: the file runs on\n",
    );
    out.push_str("# mock data with a null tokenizer of the model's vocabulary as written.\n\n");
    out.push_str(&format!("GPUS_PER_NODE={per_node}\nNUM_NODES={}\n\n", p.devices / per_node));
    out.push_str("torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \\\n");
    let n = flags.len();
    for (i, f) in flags.iter().enumerate() {
        out.push_str("    ");
        out.push_str(f);
        out.push_str(if i + 1 < n { " \\\n" } else { "\n" });
    }
    out
}

/// Every flag of the scenario: model shape, vocabulary (with a null tokenizer), sequence length,
/// experts, precision and layout.
pub(super) fn all_flags(h: &Header<'_>, o: &ExtendedOptions, notes: &mut Vec<Note>) -> Vec<String> {
    let p = h.plan;
    let w = &h.scenario.workload;
    let mut flags = vec![
        format!("--num-layers {}", w.layers),
        format!("--hidden-size {}", w.hidden),
        format!("--ffn-hidden-size {}", w.ffn_hidden),
        format!("--num-attention-heads {}", w.heads),
    ];
    if w.kv_heads != w.heads {
        flags.push("--group-query-attention".into());
        flags.push(format!("--num-query-groups {}", w.kv_heads));
    }
    if w.head_dim != w.hidden / w.heads.max(1) {
        flags.push(format!("--kv-channels {}", w.head_dim));
    }
    if w.gated_mlp {
        flags.push("--swiglu".into());
    }
    flags.push(format!("--seq-length {}", w.seq_len));
    flags.push(format!("--max-position-embeddings {}", w.seq_len));
    if let Some(v) = w.vocab {
        flags.push("--tokenizer-type NullTokenizer".into());
        flags.push(format!("--vocab-size {v}"));
    }
    if !h.scenario.workload.tied_embeddings {
        flags.push("--untie-embeddings-and-output-weights".into());
    }
    if let Some(m) = &w.moe {
        flags.push(format!("--num-experts {}", m.experts));
        flags.push(format!("--moe-router-topk {}", m.top_k));
        flags.push(format!("--moe-ffn-hidden-size {}", m.expert_ffn));
        if m.shared_experts > 0 {
            flags.push(format!(
                "--moe-shared-expert-intermediate-size {}",
                m.shared_experts.saturating_mul(m.shared_ffn)
            ));
        }
        if m.moe_blocks(w.layers) != w.layers {
            let list: Vec<&str> = (0..w.layers)
                .map(|i| {
                    let moe = i >= m.first_dense && (i - m.first_dense) % m.moe_every.max(1) == m.moe_every.max(1) - 1;
                    if moe { "1" } else { "0" }
                })
                .collect();
            flags.push(format!("--moe-layer-freq \"[{}]\"", list.join(",")));
        }
        if m.router == fmperf_core::moe_shape::Router::Sigmoid {
            flags.push("--moe-router-score-function sigmoid".into());
        }
        flags.push("--moe-grouped-gemm".into());
        flags.push("--moe-token-dispatcher-type alltoall".into());
    }
    if let Some(a) = &w.mla {
        flags.push("--multi-latent-attention".into());
        if let Some(q) = a.q_lora_rank {
            flags.push(format!("--q-lora-rank {q}"));
        }
        flags.push(format!("--kv-lora-rank {}", a.kv_lora_rank));
        flags.push(format!("--qk-head-dim {}", a.qk_nope_head_dim));
        flags.push(format!("--qk-pos-emb-head-dim {}", a.qk_rope_head_dim));
        flags.push(format!("--v-head-dim {}", a.v_head_dim));
    }
    if w.mtp_layers > 0 {
        flags.push(format!("--mtp-num-layers {}", w.mtp_layers));
    }
    flags.extend(precision_flags(o, notes));
    flags.extend(layout_flags(p, o, notes));
    flags
}

fn precision_flags(o: &ExtendedOptions, notes: &mut Vec<Note>) -> Vec<String> {
    match o.hardware.precision {
        Precision::Bf16 => vec!["--bf16".into()],
        Precision::Fp16 => vec!["--fp16".into()],
        Precision::Fp8 => {
            let mut f = vec!["--bf16".to_string(), "--fp8-format hybrid".to_string()];
            match o.fp8_recipe {
                Fp8Recipe::TransformerEngineFp8Weights => f.push("--fp8-param-gather".into()),
                Fp8Recipe::TransformerEngine => {}
                r => notes.not_written(format!(
                    "FP8 recipe {} is not Transformer Engine's; Megatron-LM runs FP8 with Transformer Engine (--fp8-format hybrid)",
                    r.as_str()
                )),
            }
            f
        }
        Precision::Fp32 | Precision::Tf32 => {
            notes.not_written("FP32 training: Megatron's default without --bf16 or --fp16 (no flag written)".into());
            vec![]
        }
    }
}

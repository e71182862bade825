//! The one-line summaries of an evaluated launch file — model, experts, configuration, expert
//! layout — written once here for `fmperf estimate --from` and the explorer's "Your run" panel.

use super::estimate::Estimate;

impl Estimate {
    /// The model: name, blocks, width, heads (K/V), MLP width and kind, vocabulary, sequence
    /// [tokens] and parameters [billions].
    pub fn model_line(&self) -> String {
        let w = &self.scenario.workload;
        format!(
            "{}: {} blocks, width {}, {} heads ({} K/V), MLP {}{}, vocabulary {}, sequence {}, {:.2} B parameters",
            self.scenario.model_name,
            w.layers,
            w.hidden,
            w.heads,
            w.kv_heads,
            w.ffn_hidden,
            if w.gated_mlp { " SwiGLU" } else { "" },
            w.vocab.unwrap_or(0),
            w.seq_len,
            self.evaluation.breakdown.parameters * 1e-9
        )
    }

    /// The experts of an MoE model (routed, top-k, widths, shared experts, MoE blocks, router,
    /// latent attention, MTP blocks, active parameters [billions]); `None` for a dense model.
    pub fn experts_line(&self) -> Option<String> {
        let w = &self.scenario.workload;
        let (mo, b) = (w.moe.as_ref()?, self.evaluation.moe.as_ref()?);
        let shared = if mo.shared_experts > 0 {
            format!(" + {} shared (width {})", mo.shared_experts, mo.shared_ffn)
        } else {
            String::new()
        };
        let mla = w.mla.map_or(String::new(), |a| {
            format!(
                " · latent attention (q rank {}, kv rank {})",
                a.q_lora_rank.map_or("none".to_string(), |r| r.to_string()),
                a.kv_lora_rank
            )
        });
        let mtp = if w.mtp_layers > 0 { format!(" · {} MTP block(s)", w.mtp_layers) } else { String::new() };
        Some(format!(
            "{} routed, top-{}, width {}{shared} · {} MoE blocks of {} · router {}{mla}{mtp} · {:.2} B active",
            mo.experts,
            mo.top_k,
            mo.expert_ffn,
            mo.moe_blocks(w.layers),
            w.layers,
            mo.router.as_str(),
            b.parameters.active * 1e-9
        ))
    }

    /// The parallel layout and execution: tp, pp (vpp), cp, dp, micro-batch, global batch
    /// [samples] with its micro-batches, recomputation, sharding, sequence parallelism.
    pub fn config_line(&self) -> String {
        let (y, o) = (&self.layout, &self.scenario.options);
        let vpp = if o.interleave > 1 { format!(" (vpp {})", o.interleave) } else { String::new() };
        format!(
            "tp {} · pp {}{vpp} · cp {} · dp {} · mbs {} · global batch {} ({} micro-batches) · recompute {} · {} · sequence parallel {}",
            y.tp,
            y.pp,
            y.cp,
            y.dp,
            y.mbs,
            y.global_batch,
            self.evaluation.breakdown.microbatches,
            o.recompute,
            o.sharding.as_str(),
            if o.sequence_parallel { "on" } else { "off" }
        )
    }

    /// The expert layout (ep, etp, expert data-parallel degree) and MoE options; `None` for a
    /// dense model.
    pub fn expert_layout_line(&self) -> Option<String> {
        let x = &self.evaluation.moe.as_ref()?.experts;
        Some(format!("ep {} · etp {} · expert dp {} · {}", x.ep, x.etp, x.edp, self.scenario.options.moe))
    }
}

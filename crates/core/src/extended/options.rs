//! The switches of extended mode: every feature that the reference model leaves out, each named,
//! documented and opt-in, with [`ExtendedOptions::realistic`] as the default that turns them on.

use std::fmt;
use std::str::FromStr;

use crate::Error;
use crate::catalog::Precision;

/// Activation recomputation (checkpointing) of the transformer blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Recompute {
    /// Every activation the backward pass needs is kept.
    None,
    /// Only the attention core is recomputed (Korthikanti et al. 2022). With flash attention the core
    /// is recomputed inside the attention backward anyway, so this costs no extra time; it keeps the
    /// memory of the attention scores off the device.
    Selective,
    /// Only each block's input is kept; the whole block forward (with its tensor-parallel
    /// collectives) runs again before its backward: one more forward pass per micro-batch.
    Full,
}

/// How model states are sharded over the data-parallel (and context-parallel) replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sharding {
    /// ZeRO-0 / plain data parallelism: everything replicated; gradients all-reduced once per
    /// iteration, overlapped with the backward pass of the last micro-batch.
    Ddp,
    /// ZeRO-1 / distributed optimizer: optimizer states sharded; gradients reduce-scattered in the
    /// backward pass of the last micro-batch, updated parameters all-gathered during the next
    /// forward pass (the pattern the reference prices, spec §5.1).
    Zero1,
    /// ZeRO-2: gradients sharded too; same collectives as ZeRO-1.
    Zero2,
    /// ZeRO-3 / FSDP full shard: parameters sharded too; every micro-batch all-gathers each block's
    /// parameters before its forward and again before its backward, and reduce-scatters its
    /// gradients after the backward; each collective overlaps with the neighbouring block's compute.
    Zero3,
}

impl Sharding {
    /// All stages, in order.
    pub const ALL: [Sharding; 4] = [Sharding::Ddp, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3];

    /// The CLI / URL name: `zero0`, `zero1`, `zero2`, `zero3` (FSDP is `zero3`).
    pub fn as_str(self) -> &'static str {
        match self {
            Sharding::Ddp => "zero0",
            Sharding::Zero1 => "zero1",
            Sharding::Zero2 => "zero2",
            Sharding::Zero3 => "zero3",
        }
    }

    /// Whether optimizer states are sharded.
    pub fn shards_optimizer(self) -> bool {
        self != Sharding::Ddp
    }

    /// Whether gradients are sharded.
    pub fn shards_gradients(self) -> bool {
        matches!(self, Sharding::Zero2 | Sharding::Zero3)
    }

    /// Whether parameters are sharded (gathered per block when needed).
    pub fn shards_parameters(self) -> bool {
        self == Sharding::Zero3
    }
}

impl Recompute {
    /// All modes, in order.
    pub const ALL: [Recompute; 3] = [Recompute::None, Recompute::Selective, Recompute::Full];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            Recompute::None => "none",
            Recompute::Selective => "selective",
            Recompute::Full => "full",
        }
    }
}

macro_rules! named_enum {
    ($t:ty, $what:literal, $extra:expr) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $t {
            type Err = Error;

            fn from_str(s: &str) -> Result<Self, Error> {
                let t = s.trim().to_ascii_lowercase();
                let extra: &[(&str, $t)] = $extra;
                if let Some((_, v)) = extra.iter().find(|(n, _)| *n == t) {
                    return Ok(*v);
                }
                <$t>::ALL.into_iter().find(|v| v.as_str() == t).ok_or_else(|| {
                    let names: Vec<&str> = <$t>::ALL.iter().map(|v| v.as_str()).collect();
                    Error::invalid($what, s, format!("must be one of {}", names.join(", ")))
                })
            }
        }
    };
}

named_enum!(Recompute, "recompute", &[]);
named_enum!(Sharding, "sharding", &[("fsdp", Sharding::Zero3), ("ddp", Sharding::Ddp)]);

/// Every switch of extended mode. Field docs say what each one models; [`Self::realistic`] is the
/// default, [`Self::describe`] lists them for display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExtendedOptions {
    /// Number format of the linear layers' matrix multiplications; selects the peak and measured
    /// rate of that precision from the catalog (FP8 where the part has it). Attention and
    /// element-wise work run in 16 bits when this is FP8 (the FP8 recipes of Transformer Engine and
    /// torchao cast only the linear layers), in 32 bits for FP32/TF32.
    pub precision: Precision,
    /// `η`: the fraction of the achievable matmul rate that matrix work sustains in a real
    /// training step (kernel shapes, launch gaps, clocks, framework). The achievable rate is the
    /// part's measured matmul ceiling (see [`Self::measured_ceiling`]). Default:
    /// [`super::efficiency::FITTED_MATMUL_EFFICIENCY`], the one constant fitted on the measured
    /// runs (see `crate::validate::fit`).
    pub matmul_efficiency: f64,
    /// `η_att`: the same fraction for the matmuls inside fused (flash) attention kernels, whose
    /// softmax work and less regular schedule keep them further below the ceiling than GEMMs.
    /// Default: [`super::efficiency::FITTED_ATTENTION_EFFICIENCY`], fitted with `η`.
    pub attention_efficiency: f64,
    /// Use the part's measured maximum achievable matmul rate (MAMF) from the hardware catalog as
    /// the ceiling; parts without a measurement use the catalog's median MAMF/peak ratio. When off,
    /// the ceiling is the datasheet peak.
    pub measured_ceiling: bool,
    /// ZeRO-3/FSDP per-block collectives whose group spans several fast domains move each
    /// device's share through its own NIC (spec §2.4 case 7), as the measured ZeRO-3 and FSDP runs
    /// across nodes do (DeepSpeed ZeRO-3 on 384–2240 A100s, Composer FSDP on 64–128 GPUs: about
    /// one NIC's bandwidth per device). Off: the reference's multi-ring rate (case 9: a domain's
    /// `τ` members drive `τ` NICs at once), which the bucketed gradient reductions of ZeRO-0/1/2
    /// always use.
    pub zero3_per_nic: bool,
    /// Price element-wise work (norms, activations, residual adds, FP8 casts, the optimizer step)
    /// and memory-bound matmuls by their HBM traffic (a roofline per operation).
    pub memory_bound_ops: bool,
    /// Activation recomputation, in time and memory.
    pub recompute: Recompute,
    /// ZeRO stage / FSDP.
    pub sharding: Sharding,
    /// ZeRO-3 shard group size [devices] (hybrid sharding: parameters sharded inside groups of this
    /// size, replicated across them, gradients all-reduced across replicas once per iteration);
    /// `None` shards over the whole data × context parallel group.
    pub shard_group: Option<u64>,
    /// Virtual pipeline stages per device (interleaved 1F1B, Narayanan et al. 2021): the bubble
    /// shrinks by this factor, pipeline messages grow by it. 1 = plain 1F1B.
    pub interleave: u64,
    /// Uneven pipeline stages: when the depth is not a multiple of `pp`, the busiest stage holds
    /// `⌈D/pp⌉` blocks (the reference rounds down and loses blocks). When off, `pp` must divide `D`.
    pub uneven_stages: bool,
    /// Causal attention: logits and attend FLOPs of a causal mask are half of full attention's
    /// (flash attention skips the masked blocks).
    pub causal: bool,
    /// Context parallelism as a ring (Liu et al. 2023; Megatron's `p2p` CP): each step passes one
    /// K/V chunk to the next rank while attending to the current one; only the part of a transfer
    /// longer than the step's compute is exposed. When off, K/V are all-gathered without overlap
    /// (the reference's pricing).
    pub cp_ring_overlap: bool,
    /// Sequence parallelism inside tensor parallelism (norms, dropout and residuals on `1/tp` of the
    /// tokens; all-gather/reduce-scatter instead of all-reduce). Changes memory and element-wise
    /// traffic; collective volumes are equal.
    pub sequence_parallel: bool,
    /// Grouped-query attention: K and V projections of `kv_heads · head_dim` columns. When off, K/V
    /// are priced at the query width (the reference).
    pub grouped_query_attention: bool,
    /// Gated MLP (SwiGLU): three matrices (gate, up, down). When off, two (the reference).
    pub gated_mlp: bool,
    /// Embedding lookup on the first pipeline stage, output head and cross-entropy loss over the
    /// vocabulary on the last (tensor-parallel over the vocabulary).
    pub embeddings_and_head: bool,
    /// Framework memory overheads: runtime context, communication buffers and allocator
    /// fragmentation as a margin (see [`super::memory::OVERHEAD_FIXED_GB`] and
    /// [`super::memory::OVERHEAD_FRACTION`]).
    pub memory_overheads: bool,
    /// Unstructured weight sparsity [fraction of zero weights, 0 ≤ s < 1]: on hardware that skips
    /// zero weights ([`super::Hardware::unstructured_sparsity`], the wafer-scale engines) the
    /// FLOPs of the blocks' weight matmuls fall to `1 − s` of dense; elsewhere it has no effect
    /// (see [`super::sparsity`]). 0 = dense (the default).
    pub weight_sparsity: f64,
    /// Mixture-of-Experts switches (load, dispatcher, FP8 dispatch, all-to-all overlap, fixed
    /// EP/ETP); no effect on dense models. See [`super::moe::MoeOptions`].
    pub moe: super::moe::MoeOptions,
}

impl ExtendedOptions {
    /// Every feature on, BF16, the fitted efficiency, selective recomputation, ZeRO-1 (distributed
    /// optimizer), plain 1F1B: the setting of a current Megatron-style run.
    pub fn realistic() -> ExtendedOptions {
        ExtendedOptions {
            precision: Precision::Bf16,
            matmul_efficiency: super::efficiency::FITTED_MATMUL_EFFICIENCY,
            attention_efficiency: super::efficiency::FITTED_ATTENTION_EFFICIENCY,
            measured_ceiling: true,
            zero3_per_nic: true,
            memory_bound_ops: true,
            recompute: Recompute::Selective,
            sharding: Sharding::Zero1,
            shard_group: None,
            interleave: 1,
            uneven_stages: true,
            causal: true,
            cp_ring_overlap: true,
            sequence_parallel: true,
            grouped_query_attention: true,
            gated_mlp: true,
            embeddings_and_head: true,
            memory_overheads: true,
            weight_sparsity: 0.0,
            moe: super::moe::MoeOptions::default(),
        }
    }

    /// Checks ranges: efficiency in (0, 1], interleave ≥ 1, shard group ≥ 1, sparsity in [0, 1).
    pub fn validate(&self) -> Result<(), Error> {
        for (name, v) in
            [("matmul_efficiency", self.matmul_efficiency), ("attention_efficiency", self.attention_efficiency)]
        {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(Error::invalid(name, v, "must be in (0, 1]")
                    .with_hint("the fraction of the achievable matmul rate sustained in training"));
            }
        }
        if self.interleave == 0 || self.interleave > 1024 {
            return Err(Error::invalid("interleave", self.interleave, "must be from 1 to 1024"));
        }
        if self.shard_group == Some(0) {
            return Err(Error::invalid("shard_group", 0, "must be a positive integer"));
        }
        let s = self.weight_sparsity;
        if !(s.is_finite() && (0.0..1.0).contains(&s)) {
            return Err(Error::invalid("weight_sparsity", s, "must be from 0 (dense) to below 1")
                .with_hint("the fraction of weights that are zero, e.g. 0.9"));
        }
        Ok(())
    }

    /// Every switch as `(name, value, what it models)`, for tables and the page (the order and
    /// words of [`super::switches::SWITCHES`]).
    pub fn describe(&self) -> Vec<(&'static str, String, &'static str)> {
        super::switches::SWITCHES.iter().map(|s| (s.key, self.value_of(s.key).unwrap_or_default(), s.what)).collect()
    }
}

impl Default for ExtendedOptions {
    fn default() -> Self {
        ExtendedOptions::realistic()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in Recompute::ALL {
            assert_eq!(r.as_str().parse::<Recompute>().unwrap(), r);
        }
        for s in Sharding::ALL {
            assert_eq!(s.as_str().parse::<Sharding>().unwrap(), s);
        }
        assert_eq!("FSDP".parse::<Sharding>().unwrap(), Sharding::Zero3);
        assert!("zero4".parse::<Sharding>().is_err());
    }

    #[test]
    fn validation() {
        assert!(ExtendedOptions::realistic().validate().is_ok());
        let bad = ExtendedOptions { matmul_efficiency: 1.5, ..ExtendedOptions::realistic() };
        assert_eq!(bad.validate().unwrap_err().field(), Some("matmul_efficiency"));
        let bad = ExtendedOptions { interleave: 0, ..ExtendedOptions::realistic() };
        assert_eq!(bad.validate().unwrap_err().field(), Some("interleave"));
        assert_eq!(ExtendedOptions::realistic().describe().len(), 19);
        let bad = ExtendedOptions { weight_sparsity: 1.0, ..ExtendedOptions::realistic() };
        assert_eq!(bad.validate().unwrap_err().field(), Some("weight_sparsity"));
    }
}

//! Megatron-LM's fine-grained activation offloading (`--fine-grained-activation-offloading` with
//! `--offload-modules`, [`ActivationOffload`]): what the copies to the host and back cost one
//! block per micro-batch, and what they take off the device's activations. Read in
//! `megatron/core/pipeline_parallel/fine_grained_activation_offload.py` at NVIDIA/Megatron-LM
//! d98e8a6:
//!
//! * every tensor autograd saves for the backward inside an offloaded module's scope is copied to
//!   pinned host memory (`__enter__` / `on_save_for_backward`, l. 835–872; tensors under
//!   1,048,576 elements stay, l. 747 and 1084: none of a priced block's saved tensors at the
//!   functional tests' shapes is that small, so all count);
//! * the copies of a group run on their own device-to-host stream right after the group's forward
//!   (`on_group_commit_forward`, l. 1262–1268): the forward never waits for them, so they hide
//!   behind the next group's forward;
//! * the reload of a group starts at the start of the previous group's backward on its own
//!   host-to-device stream, after waiting for the group's offload (`on_group_start_backward`
//!   l. 1332–1341, `bulk_reload_group` l. 1176–1186); the group's backward waits for it
//!   (`on_group_commit_backward`, l. 1288–1306): it hides behind one group's backward.
//!
//! Per block and micro-batch, with `B` the bytes the offloaded modules' operations keep under the
//! run's recomputation ([`super::ops::KeptBytes::under`]; the unfused core's probabilities `P`
//! twice: the softmax and `P·V` each save them, and each saved tensor is its own copy,
//! `tensor_push` l. 1051–1061) and `r` the host link's achieved rate
//! per direction ([`achieved_link_gbps`]): the copy takes `c = B / r` each way, and
//! `exposed_fwd = max(0, c − t_fwd)`, `exposed_bwd = max(0, c − t_bwd)` with `t_fwd`, `t_bwd` the
//! block's own forward and backward (with recomputation) — one block standing for the group it
//! hides behind. The exposed time is memory-bound time of the pass (`t_mem`). The offloaded bytes
//! leave the block's kept activations (every policy's figure).
//!
//! Module → operations: `attn_norm` → `attn_norm`; `qkv_linear` → the Q/K/V projections
//! (`qkv_proj`; latent attention's `mla_*` down and up projections and their norms, all inside
//! `get_query_key_value_tensors`, `megatron/core/transformer/attention.py` l. 1386–1392);
//! `core_attn` → the attention core (`attention`, the unfused core's `attention_scores`,
//! `attention_softmax`, `attention_context`; `attention.py` l. 1552–1553); `attn_proj` →
//! `out_proj`; `mlp_norm` → `mlp_norm`. The experts' `expert_fc1` and `moe_act` leave the
//! device's memory ([`super::moe::expert_offload`]) but their copies are not priced: such a row's
//! time is priced without them and its note says so.

use super::hardware::Hardware;
use super::ops::{KeptBytes, Operation};
use super::options::{ActivationOffload, ExtendedOptions};
use super::pricing::Pricing;
use crate::Error;

/// Achieved share of a host link's per-direction datasheet rate for a large pinned copy [×]:
/// `nvbandwidth -t host_to_device_memcpy_ce -b 1024` measured 55.63 GB/s on an H100 over PCIe
/// Gen5 x16 (64 GB/s per direction): 55.63 / 64 = 0.869 (NVIDIA nvbandwidth, example output in
/// the NVbandwidth tutorial at dev.smart-guide.co.kr, after NVIDIA's NVbandwidth blog post).
/// Taken for every link (NVLink-C2C and PCIe Gen4 measured none here: an estimate there).
pub const HOST_LINK_ACHIEVED: f64 = 55.63 / 64.0;

/// The operations (by name) whose saved tensors a Megatron offload module copies (module docs).
fn module_ops(o: &ActivationOffload) -> Vec<&'static str> {
    let mut names = Vec::new();
    if o.attn_norm {
        names.push("attn_norm");
    }
    if o.qkv_linear {
        names.extend([
            "qkv_proj",
            "mla_q_down",
            "mla_kv_down",
            "mla_q_norm",
            "mla_kv_norm",
            "mla_q_up",
            "mla_kv_up",
            "mla_q_proj",
        ]);
    }
    if o.core_attn {
        names.extend(["attention", "attention_scores", "attention_softmax", "attention_context"]);
    }
    if o.attn_proj {
        names.push("out_proj");
    }
    if o.mlp_norm {
        names.push("mlp_norm");
    }
    names
}

/// A run that offloads activations on a part whose host link the catalog does not state is
/// refused, naming the field (no guessed link).
pub fn check_link(hw: &Hardware, opts: &ExtendedOptions) -> Result<(), Error> {
    if opts.activation_offload.any() && hw.host_link_gbps.is_none() {
        return Err(Error::invalid(
            "host.link_gbps_per_direction",
            "not stated",
            "activation offloading to the host (--offload-modules) needs the part's host link bandwidth per \
             direction [GB/s]: give it in the system's host entry",
        ));
    }
    Ok(())
}

/// The host link's achieved rate per direction [GB/s]: the datasheet rate times
/// [`HOST_LINK_ACHIEVED`]; `None` where the catalog does not state the link.
pub fn achieved_link_gbps(hw: &Hardware) -> Option<f64> {
    hw.host_link_gbps.map(|g| g * HOST_LINK_ACHIEVED)
}

/// What offloading takes from one block per micro-batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffloadCost {
    /// Bytes the offloaded operations keep, under each recomputation policy [B].
    pub kept: KeptBytes,
    /// One copy of them, each way, over the host link under the run's policy [s].
    pub copy_s: f64,
}

/// The offload of the block whose operations are `ops`; `None` when nothing is offloaded (or the
/// link is not stated: [`check_link`] refuses that run first).
pub fn offload_of(ops: &[Operation], p: &Pricing) -> Option<OffloadCost> {
    let o = &p.opts.activation_offload;
    if !o.any() {
        return None;
    }
    let link = achieved_link_gbps(p.hw)?;
    let names = module_ops(o);
    let mut kept = KeptBytes::default();
    for op in ops.iter().filter(|op| names.contains(&op.name)) {
        kept.none += op.kept.none;
        kept.selective += op.kept.selective;
        kept.full += op.kept.full;
        kept.op += op.kept.op;
    }
    // The unfused core's probabilities are saved twice, by the softmax and by `P·V` (one storage
    // on the device, two pushes to the offload group, each copied: `tensor_push` l. 1051–1061).
    let twice: f64 = ops
        .iter()
        .filter(|op| o.core_attn && op.name == "attention_softmax")
        .map(|op| op.kept.under(p.opts.recompute))
        .sum();
    let copy_s = (kept.under(p.opts.recompute) + twice) * 1e-9 / link;
    Some(OffloadCost { kept, copy_s })
}

/// The part of a copy of `copy_s` [s] not hidden behind `hidden_s` [s] of compute on the other
/// stream: `max(0, copy − hidden)`.
pub fn exposed_s(copy_s: f64, hidden_s: f64) -> f64 {
    (copy_s - hidden_s).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extended::options::Recompute;

    #[test]
    fn exposure_is_what_the_compute_does_not_hide() {
        // A 1.2 GB copy at 55.63 GB/s: 1.2 / 55.63 = 21.571 ms; behind 5 ms of compute 16.571 ms
        // shows, behind 30 ms none.
        let copy = 1.2 / (64.0 * HOST_LINK_ACHIEVED);
        assert!((copy - 0.021571).abs() < 1e-6, "{copy}");
        assert!((exposed_s(copy, 0.005) - 0.016571).abs() < 1e-6);
        assert_eq!(exposed_s(copy, 0.030), 0.0);
    }

    #[test]
    fn achieved_share_is_the_measured_over_the_datasheet_rate() {
        // 55.63 / 64 = 0.86922 (PCIe Gen5 x16); at NVLink-C2C's 450 GB/s: 391.15 GB/s.
        assert!((HOST_LINK_ACHIEVED - 0.869_218_75).abs() < 1e-12);
        assert!((450.0 * HOST_LINK_ACHIEVED - 391.148_437_5).abs() < 1e-9);
    }

    /// The unfused core of Megatron-LM's functional-test GPT block (b = 4, a = 8 heads,
    /// s = 1,024, d = 64, 2-byte activations, one device), nothing recomputed, `core_attn`
    /// offloaded over an H100's PCIe Gen5 x16: Q, K, V kept by the scores (3·b·s·a·d·2 B =
    /// 3·4·1,024·512·2 = 12,582,912 B) and P (b·a·s²·2 B = 4·8·1,024²·2 = 67,108,864 B) copied
    /// twice: 146,800,640 B at 64 · 0.869 = 55.63 GB/s = 2.6389 ms each way; the device keeps
    /// 12,582,912 + 67,108,864 = 79,691,776 B fewer.
    #[test]
    fn the_unfused_core_by_hand() {
        use crate::SystemParams;
        use crate::extended::layout::Layout;
        use crate::extended::options::AttentionKernel;
        use crate::extended::workload::Workload;
        let mut hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        hw.host_link_gbps = Some(64.0);
        let offload = ActivationOffload { core_attn: true, ..ActivationOffload::default() };
        let opts = ExtendedOptions {
            attention_kernel: AttentionKernel::Unfused,
            recompute: Recompute::None,
            activation_offload: offload,
            ..ExtendedOptions::realistic()
        };
        let layout = Layout::placed(1, 1, 1, 1, 4, 4, 8);
        let p = Pricing { hw: &hw, opts: &opts };
        let ops = crate::extended::block::operations(&Workload::MEGATRON_TEST_GPT, &layout, &p);
        let o = offload_of(&ops, &p).unwrap();
        assert_eq!(o.kept.none, 12_582_912.0 + 67_108_864.0);
        let copy = (12_582_912.0 + 2.0 * 67_108_864.0) * 1e-9 / 55.63;
        assert!((o.copy_s - copy).abs() < 1e-15 && (copy - 2.6389e-3).abs() < 1e-7, "{}", o.copy_s);
        // Without offloading nothing; offloading on a part whose link is not stated is refused.
        let plain = ExtendedOptions { activation_offload: ActivationOffload::default(), ..opts };
        assert!(offload_of(&ops, &Pricing { hw: &hw, opts: &plain }).is_none());
        hw.host_link_gbps = None;
        let e = check_link(&hw, &opts).unwrap_err().to_string();
        assert!(e.contains("host.link_gbps_per_direction") && e.contains("not stated"), "{e}");
        assert!(check_link(&hw, &plain).is_ok());
    }

    #[test]
    fn the_modules_name_their_operations() {
        let none = ActivationOffload::default();
        assert!(module_ops(&none).is_empty() && !none.any());
        let core = ActivationOffload { core_attn: true, attn_proj: true, ..none };
        assert_eq!(
            module_ops(&core),
            ["attention", "attention_scores", "attention_softmax", "attention_context", "out_proj"]
        );
        // Selective recomputation's figure is the one priced: kept.under(Selective).
        let k = KeptBytes { none: 4.0, selective: 3.0, full: 1.0, op: 2.0 };
        assert_eq!(k.under(Recompute::Selective), 3.0);
    }
}

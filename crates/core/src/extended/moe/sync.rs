//! The forward pass of a Megatron-Core MoE block between the dispatcher's device→host syncs.
//!
//! **Where the syncs are** (NVIDIA/Megatron-LM at d98e8a6,
//! `megatron/core/transformer/moe/token_dispatcher.py`): every dispatcher needs the tokens per
//! expert on the host before it can size the experts' inputs, once per MoE layer and forward pass:
//! * all-gather (`MoEAllGatherTokenDispatcher.dispatch_postprocess`, l. 320):
//!   `self.local_map.sum(dim=0).long().cpu()` after the routing map's, probabilities' and tokens'
//!   all-gathers (`token_dispatch`, l. 281–303): a blocking copy on the compute stream;
//! * all-to-all (`MoEAlltoAllTokenDispatcher`): the copies on a side stream at
//!   `cuda_dtoh_point` and the wait `self.d2h_event.synchronize()` at `cuda_sync_point`
//!   (`_maybe_dtoh_and_synchronize`, l. 921–960), which `preprocess` sets for every dropless
//!   layout (l. 541–616: `before_ep_alltoall` with TP×EP > 1, else `before_finish`, or earlier);
//!   only drop-and-pad (`--moe-pad-expert-input-to-capacity`, fmperf's padded capacity load)
//!   skips the copies and the sync (`if not self.drop_and_pad`, l. 927);
//! * the flex dispatcher's managers read a count with `.item()` (HybridEP l. 1082, DeepEP
//!   l. 1450).
//!
//! The backward has none: autograd's all-to-all and all-gather reuse the host-side splits of the
//! forward. Sinkhorn routing syncs once per iteration too (`moe_utils.py` `sinkhorn` l. 185–207,
//! `while error > tol` reads a GPU scalar; one iteration counted, [`super::host_calls::SINKHORN`]:
//! no source states how many run); its sync falls inside the router, and the piece of the stretch
//! after it (the router's last calls and the dispatcher's metadata: host calls with next to no GPU
//! work) costs its host time either way, so it is not split out here.
//!
//! **What a sync does to the pass.** At a sync the host waits until the GPU has run everything
//! queued, so the GPU's queue is empty when the host goes on: the host cannot run ahead across
//! it. A forward pass of identical MoE blocks is a chain of identical stretches from one sync to
//! the next, each starting with an empty queue: the layer's work after its sync (the rest of the
//! dispatcher, the permutation, the experts, the combine, the MLP sub-layer's tail), the next
//! block's attention sub-layer, and that block's MLP norm, router and dispatcher metadata up to
//! its sync. Within a stretch the host issues each phase's calls one after another while the GPU
//! runs them as they arrive ([`stretch_s`]); the stretch ends when the GPU has run its last
//! kernel. Without the sync the block's time is `max(host, GPU)`; with it a phase heavy on the
//! host (the post-sync permutation and the experts' calls) delays the GPU work of the phases
//! after it (an attention heavier on the GPU than on the host), which the host's lead can no
//! longer hide.

/// Whether the layer's dispatcher waits on the GPU in the forward pass (module docs): every
/// dispatcher but the all-to-all one under drop-and-pad (fmperf's padded capacity load).
pub fn dispatcher_syncs(mo: &MoeOptions) -> bool {
    !(mo.dispatcher == Dispatcher::AllToAll && matches!(mo.load, Load::Capacity { .. }))
}

/// Whether a forward pass of the layer runs as stretches between its syncs ([`stretch_s`]): its
/// dispatcher syncs ([`dispatcher_syncs`]) and no other micro-batch's work is interleaved with
/// it. Megatron-Core's EP all-to-all overlap ([`A2aOverlap`] on or searched) issues another
/// micro-batch's backward between the forward's parts (`TransformerLayerSchedulePlan::run`,
/// `megatron/core/models/common/model_chunk_schedule_plan.py` l. 236–301: "mlp_bwd->mlp_bwd_dw->
/// mlp_fwd" on the compute stream right after the forward's dispatch), so the GPU is not idle
/// while the host issues the forward's calls after the sync: not modelled as stretches.
pub fn forward_stretches(mo: &MoeOptions) -> bool {
    dispatcher_syncs(mo) && mo.a2a_overlap == A2aOverlap::Off
}

/// One phase of a stretch between syncs: its calls' host time and its kernels' GPU time [s].
use super::options::{A2aOverlap, Dispatcher, Load, MoeOptions};

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Phase {
    /// Host time to issue the phase's calls [s].
    pub host_s: f64,
    /// GPU time of the phase's kernels [s].
    pub gpu_s: f64,
}

/// The time of a stretch of `phases` in issue order from an empty GPU queue to the sync at its
/// end [s]: the host issues each phase's calls evenly over its host time, never waiting within
/// the stretch; the GPU runs each phase's work as it arrives, after the work queued before it.
/// With `S_k` the host's time at the start of phase `k` (`Σ_{i<k} h_i`) the GPU ends phase `k` at
/// `E_k = max(E_{k−1} + g_k, S_k + max(h_k, g_k))` (`E_0 = 0`): behind, it runs the phase after
/// its backlog; ahead, it follows the host's issue. The stretch lasts `E_n`, at least
/// `max(Σh, Σg)` (the block's time when the host may run ahead) and at most `Σh + Σg`.
pub fn stretch_s(phases: &[Phase]) -> f64 {
    let (mut host_at, mut gpu_done) = (0.0_f64, 0.0_f64);
    for p in phases {
        gpu_done = (gpu_done + p.gpu_s).max(host_at + p.host_s.max(p.gpu_s));
        host_at += p.host_s;
    }
    gpu_done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(host_s: f64, gpu_s: f64) -> Phase {
        Phase { host_s, gpu_s }
    }

    #[test]
    fn a_stretch_by_hand() {
        // One phase: whichever of host and GPU is longer.
        assert_eq!(stretch_s(&[phase(3.0, 1.0)]), 3.0);
        assert_eq!(stretch_s(&[phase(1.0, 3.0)]), 3.0);
        // Host-heavy then GPU-heavy: the GPU's 4 wait for the host's 3 of the first phase:
        // E_1 = max(0 + 1, 0 + 3) = 3; E_2 = max(3 + 4, 3 + max(1, 4)) = 7, against
        // max(Σh, Σg) = max(4, 5) = 5 without the sync.
        assert_eq!(stretch_s(&[phase(3.0, 1.0), phase(1.0, 4.0)]), 7.0);
        // The other order overlaps: E_1 = max(4, 1) = 4; E_2 = max(4 + 1, 1 + max(3, 1)) = 5.
        assert_eq!(stretch_s(&[phase(1.0, 4.0), phase(3.0, 1.0)]), 5.0);
        // Host-bound throughout: the host's sum, 2 + 3 + 1 = 6 (GPU 1 + 2 + 0.5 = 3.5):
        // E = max(1, 2) = 2; max(2 + 2, 2 + 3) = 5; max(5 + 0.5, 5 + 1) = 6.
        assert_eq!(stretch_s(&[phase(2.0, 1.0), phase(3.0, 2.0), phase(1.0, 0.5)]), 6.0);
        // GPU-bound throughout: the GPU's sum, 1 + 4 + 3 = 8 (host 0.5 + 1 + 1).
        assert_eq!(stretch_s(&[phase(0.5, 1.0), phase(1.0, 4.0), phase(1.0, 3.0)]), 8.0);
        assert_eq!(stretch_s(&[]), 0.0);
    }

    #[test]
    fn only_drop_and_pad_all_to_all_skips_the_sync() {
        let mo = MoeOptions::default();
        assert_eq!(mo.dispatcher, Dispatcher::AllToAll);
        assert!(dispatcher_syncs(&mo));
        let padded = MoeOptions { load: Load::Capacity { factor: 1.25, imbalance: 1.1 }, ..mo };
        assert!(!dispatcher_syncs(&padded));
        // The all-gather dispatcher copies the counts to the host whatever the load.
        assert!(dispatcher_syncs(&MoeOptions { dispatcher: Dispatcher::AllGather, ..padded }));
        assert!(dispatcher_syncs(&MoeOptions { dispatcher: Dispatcher::Hierarchical { max_domains: None }, ..mo }));
        // Another micro-batch's backward interleaved (EP all-to-all overlap): no stretches.
        let off = MoeOptions { a2a_overlap: A2aOverlap::Off, ..mo };
        assert!(forward_stretches(&off));
        assert!(!forward_stretches(&MoeOptions { a2a_overlap: A2aOverlap::On, ..off }));
        assert!(!forward_stretches(&MoeOptions { a2a_overlap: A2aOverlap::Search, ..off }));
        assert!(!forward_stretches(&MoeOptions { load: padded.load, ..off }));
    }
}

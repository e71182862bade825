//! What pricing one configuration gives, in both modes: the totals of one training iteration on one
//! device (spec §6: time, its components, memory and FLOPs) and the headline numbers a search
//! ranks. The reference model computes them in [`crate::reference::totals`]; extended mode fills
//! the same fields.

/// The reference's stats of one iteration on one device; field names are the reference's keys.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Totals {
    /// Iteration time [s].
    pub t: f64,
    /// Work per device and iteration [TFLOP].
    pub flops_per_gpu: f64,
    /// Memory per device [GB]: `wts_mem + wts_grad_mem + wts_optimizer_states_mem + acts_mem`.
    pub mem: f64,
    /// Compute time (with per-kernel overheads) [s].
    pub t_comp: f64,
    /// Exposed memory time [s].
    pub t_mem: f64,
    /// Tensor-parallel communication (exposed) [s].
    pub t_tp_comm: f64,
    /// Data-parallel communication (exposed) [s].
    pub t_dp_comm: f64,
    /// Pipeline communication [s].
    pub t_pp_comm: f64,
    /// Pipeline bubble [s].
    pub t_bubble: f64,
    /// Expert-parallel all-to-all (MoE dispatch and combine), exposed [s]; 0 for dense models
    /// and in reference mode. Not a key of the reference's files: written only when not 0 (a
    /// dense model's totals serialise as they always have), read as 0 when absent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub t_ep_comm: f64,
    /// `t_comp / t` [dimensionless].
    pub comp_frac: f64,
    /// `t_tp_comm / t` [dimensionless].
    pub tp_comm_frac: f64,
    /// `t_dp_comm / t` [dimensionless].
    pub dp_comm_frac: f64,
    /// `t_pp_comm / t` [dimensionless].
    pub pp_comm_frac: f64,
    /// `t_bubble / t` [dimensionless].
    pub bubble_frac: f64,
    /// `t_mem / t` [dimensionless].
    pub mem_frac: f64,
    /// fp16 weights of the local blocks [GB].
    pub wts_mem: f64,
    /// Weight gradients [GB] (kept in full, quirk Q8).
    pub wts_grad_mem: f64,
    /// Optimizer states: fp32 master copy and Adam moments, sharded [GB].
    pub wts_optimizer_states_mem: f64,
    /// Activations in flight [GB].
    pub acts_mem: f64,
}

/// Whether a time is 0 (a part the totals leave out when they serialise).
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// The headline numbers of one configuration (what the search ranks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// `G / t` [samples/s].
    pub throughput_samples_per_s: f64,
    /// Memory per device [GB].
    pub mem_gb: f64,
    /// What a device needs once the caching allocator has given its cache back [GB] (extended
    /// mode: allocated + CUDA context + collective buffers, [`super::Need::without_cache_gb`];
    /// reference mode: `mem_gb`): what the search judges a configuration's fit by.
    pub need_gb: f64,
    /// `need ≤ hbm_capacity`.
    pub feasible: bool,
    /// Iteration totals.
    pub totals: Totals,
}

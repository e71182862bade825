//! The drill-down of one configuration: its transformer block layer by layer (one block, one
//! micro-batch, one device, forward + backward), with each layer's share of the iteration.

use crate::reference::{Collective, Evaluation, LayerRow};

/// One layer of the block.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LayerLine {
    /// `MLP` or `attention`.
    pub module: &'static str,
    /// The reference's row name (`fc1`, `fusedla`, …).
    pub name: &'static str,
    /// Forward + backward work [TFLOP].
    pub flops_tflop: f64,
    /// Forward + backward HBM traffic [GB].
    pub traffic_gb: f64,
    /// Weights [GB].
    pub weights_gb: f64,
    /// Activations kept for the backward pass [GB].
    pub activations_gb: f64,
    /// Forward + backward time [s].
    pub time_s: f64,
    /// Compute time [s].
    pub compute_s: f64,
    /// Exposed memory time [s].
    pub memory_s: f64,
    /// Exposed communication [s].
    pub comm_s: f64,
    /// Whether the layer runs on tensor cores (matrix units).
    pub tensor_cores: bool,
    /// The layer's collectives, one line each (`fwd allgather 0.105 GB over 8 (8 in domain): 0.21 ms`).
    pub collectives: Vec<String>,
    /// The layer's share of the iteration time, `time · blocks per stage · micro-batches / t`
    /// [fraction].
    pub share_of_step: f64,
}

/// The block of one configuration, with the factors that turn it into an iteration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LayerTable {
    /// MLP rows, then attention rows, in the reference's order.
    pub lines: Vec<LayerLine>,
    /// Blocks on one pipeline stage (`D / pp`).
    pub blocks_per_stage: u64,
    /// Micro-batches per iteration.
    pub microbatches: u64,
    /// One block, one micro-batch, forward + backward [s].
    pub block_time_s: f64,
}

/// One collective in words, with volume [GB], group, fast share and time [ms].
pub fn describe_collective(pass: &str, c: &Collective) -> String {
    format!(
        "{pass} {} {:.4} GB over {} ({} in domain): {:.3} ms",
        c.kind.as_str(),
        c.volume_gb,
        c.group_size,
        c.fast_share,
        c.time_s * 1e3
    )
}

fn line(module: &'static str, r: &LayerRow, scale: f64) -> LayerLine {
    let collectives = r
        .collectives_fwd
        .iter()
        .map(|c| describe_collective("fwd", c))
        .chain(r.collectives_bwd.iter().map(|c| describe_collective("bwd", c)))
        .collect();
    LayerLine {
        module,
        name: r.name,
        flops_tflop: r.flops_fwd_tflop + r.flops_bwd_tflop,
        traffic_gb: r.mem_fwd_gb + r.mem_bwd_gb,
        weights_gb: r.weights_gb,
        activations_gb: r.activations_gb,
        time_s: r.t_s,
        compute_s: r.t_fwd_comp_s + r.t_bwd_comp_s,
        memory_s: r.t_fwd_mem_s + r.t_bwd_mem_s,
        comm_s: r.t_fwd_comm_s + r.t_bwd_comm_s,
        tensor_cores: r.tensor_cores,
        collectives,
        share_of_step: r.t_s * scale,
    }
}

/// The layer table of an evaluation of a model with `depth` blocks.
pub fn layer_table(e: &Evaluation, depth: u64) -> LayerTable {
    let blocks_per_stage = depth / e.candidate.pp.max(1);
    let scale = if e.totals.t > 0.0 { (blocks_per_stage * e.microbatches) as f64 / e.totals.t } else { 0.0 };
    let lines: Vec<LayerLine> = e
        .mlp
        .iter()
        .map(|r| line("MLP", r, scale))
        .chain(e.attention.iter().map(|r| line("attention", r, scale)))
        .collect();
    let block_time_s = lines.iter().map(|l| l.time_s).sum();
    LayerTable { lines, blocks_per_stage, microbatches: e.microbatches, block_time_s }
}

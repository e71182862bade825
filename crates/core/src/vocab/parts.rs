//! The components of a ranked configuration's iteration time and memory per device, read off its
//! [`Totals`] (both modes fill the same fields), with keys, labels and what each part is in each
//! mode. Shared by sweeps, the explorer and their exports.

use super::Totals;
use crate::mode_kind::Mode;

/// A component of the iteration time. The six add up to the iteration time
/// (`t = compute + exposed memory + TP + DP + PP communication + bubble`, spec §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimePart {
    /// Compute (`t_comp`).
    Compute,
    /// Memory-bound time not hidden behind compute (`t_mem`).
    ExposedMemory,
    /// Tensor-parallel (and context-parallel) communication (`t_tp_comm`).
    TpComm,
    /// Data-parallel communication (`t_dp_comm`).
    DpComm,
    /// Pipeline point-to-point sends (`t_pp_comm`).
    PpComm,
    /// Pipeline bubble (`t_bubble`).
    Bubble,
}

impl TimePart {
    /// All parts, in stacking order.
    pub const ALL: [TimePart; 6] = [
        TimePart::Compute,
        TimePart::ExposedMemory,
        TimePart::TpComm,
        TimePart::DpComm,
        TimePart::PpComm,
        TimePart::Bubble,
    ];

    /// Short machine key (`comp`, `mem`, `tp_comm`, `dp_comm`, `pp_comm`, `bubble`), as in JSON.
    pub fn key(self) -> &'static str {
        match self {
            TimePart::Compute => "comp",
            TimePart::ExposedMemory => "mem",
            TimePart::TpComm => "tp_comm",
            TimePart::DpComm => "dp_comm",
            TimePart::PpComm => "pp_comm",
            TimePart::Bubble => "bubble",
        }
    }

    /// Label for legends and table headers.
    pub fn label(self) -> &'static str {
        match self {
            TimePart::Compute => "compute",
            TimePart::ExposedMemory => "exposed memory",
            TimePart::TpComm => "TP comm",
            TimePart::DpComm => "DP comm",
            TimePart::PpComm => "PP comm",
            TimePart::Bubble => "bubble",
        }
    }

    /// One sentence on what the part is in `mode`.
    pub fn description(self, mode: Mode) -> &'static str {
        match (self, mode) {
            (TimePart::Compute, Mode::Reference) => "matrix and vector work at 80 % of peak, plus 20 µs per kernel",
            (TimePart::Compute, Mode::Extended) => {
                "matmuls and attention at the fitted fraction of the measured ceiling, recomputation included"
            }
            (TimePart::ExposedMemory, Mode::Reference) => "HBM traffic that takes longer than the layer's compute",
            (TimePart::ExposedMemory, Mode::Extended) => {
                "element-wise work, memory-bound matmuls and the optimizer step, priced by HBM traffic"
            }
            (TimePart::TpComm, Mode::Reference) => {
                "tensor- and context-parallel collectives inside each block (not overlapped)"
            }
            (TimePart::TpComm, Mode::Extended) => {
                "tensor- and context-parallel collectives inside each block, and for MoE models the expert all-to-all (dispatch and combine) not hidden behind compute"
            }
            (TimePart::DpComm, Mode::Reference) => "data-parallel weight all-gather and gradient reduce-scatter",
            (TimePart::DpComm, Mode::Extended) => {
                "data-parallel collectives not hidden by compute (ZeRO stage, ZeRO-3 gathers per micro-batch)"
            }
            (TimePart::PpComm, _) => "activations sent between pipeline stages",
            (TimePart::Bubble, Mode::Reference) => "pipeline fill and drain: (pp − 1) micro-batch steps",
            (TimePart::Bubble, Mode::Extended) => "pipeline fill and drain: (pp − 1)/v slots with v-way interleaving",
        }
    }

    /// This part of `t` [s].
    pub fn of(self, t: &Totals) -> f64 {
        match self {
            TimePart::Compute => t.t_comp,
            TimePart::ExposedMemory => t.t_mem,
            TimePart::TpComm => t.t_tp_comm,
            TimePart::DpComm => t.t_dp_comm,
            TimePart::PpComm => t.t_pp_comm,
            TimePart::Bubble => t.t_bubble,
        }
    }
}

/// A component of the memory per device; the four add up to it (spec §6, quirk Q8; extended mode
/// counts its framework margin with the activations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryPart {
    /// Weights of the local blocks.
    Weights,
    /// Weight gradients.
    Gradients,
    /// Optimizer states (master weights and Adam moments).
    OptimizerStates,
    /// Activations of the micro-batches in flight.
    Activations,
}

impl MemoryPart {
    /// All parts, in stacking order.
    pub const ALL: [MemoryPart; 4] =
        [MemoryPart::Weights, MemoryPart::Gradients, MemoryPart::OptimizerStates, MemoryPart::Activations];

    /// Short machine key (`weights`, `grads`, `optimizer`, `activations`), as in JSON.
    pub fn key(self) -> &'static str {
        match self {
            MemoryPart::Weights => "weights",
            MemoryPart::Gradients => "grads",
            MemoryPart::OptimizerStates => "optimizer",
            MemoryPart::Activations => "activations",
        }
    }

    /// Label for legends and table headers.
    pub fn label(self) -> &'static str {
        match self {
            MemoryPart::Weights => "weights",
            MemoryPart::Gradients => "gradients",
            MemoryPart::OptimizerStates => "optimizer states",
            MemoryPart::Activations => "activations",
        }
    }

    /// This part of `t` [GB].
    pub fn of(self, t: &Totals) -> f64 {
        match self {
            MemoryPart::Weights => t.wts_mem,
            MemoryPart::Gradients => t.wts_grad_mem,
            MemoryPart::OptimizerStates => t.wts_optimizer_states_mem,
            MemoryPart::Activations => t.acts_mem,
        }
    }
}

//! The components of a ranked configuration's iteration time and memory per device, read off its
//! [`Totals`] (both modes fill the same fields), with keys and labels (what each part is in each
//! mode, `TimePart::description`, lives with the modes in `crate::mode`). Shared by sweeps, the
//! explorer and their exports.

use super::Totals;

/// A component of the iteration time. The parts add up to the iteration time
/// (`t = compute + exposed memory + TP + EP + DP + PP communication + bubble`; spec §6 has no EP
/// part: it is 0 in reference mode and for dense models). Every caller lists the parts from
/// [`TimePart::ALL`], never by hand, so a part added here shows everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimePart {
    /// Compute (`t_comp`).
    Compute,
    /// Memory-bound time not hidden behind compute (`t_mem`).
    ExposedMemory,
    /// Tensor-parallel (and context-parallel) communication (`t_tp_comm`).
    TpComm,
    /// Expert-parallel all-to-all of MoE blocks (dispatch and combine) not hidden behind compute
    /// (`t_ep_comm`).
    EpComm,
    /// Data-parallel communication (`t_dp_comm`).
    DpComm,
    /// Pipeline point-to-point sends (`t_pp_comm`).
    PpComm,
    /// Pipeline bubble (`t_bubble`).
    Bubble,
}

impl TimePart {
    /// How many parts there are.
    pub const COUNT: usize = 7;

    /// All parts, in stacking order.
    pub const ALL: [TimePart; TimePart::COUNT] = [
        TimePart::Compute,
        TimePart::ExposedMemory,
        TimePart::TpComm,
        TimePart::EpComm,
        TimePart::DpComm,
        TimePart::PpComm,
        TimePart::Bubble,
    ];

    /// Short machine key (`comp`, `mem`, `tp_comm`, `ep_comm`, `dp_comm`, `pp_comm`, `bubble`), as
    /// in JSON.
    pub fn key(self) -> &'static str {
        match self {
            TimePart::Compute => "comp",
            TimePart::ExposedMemory => "mem",
            TimePart::TpComm => "tp_comm",
            TimePart::EpComm => "ep_comm",
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
            TimePart::EpComm => "EP all-to-all",
            TimePart::DpComm => "DP comm",
            TimePart::PpComm => "PP comm",
            TimePart::Bubble => "bubble",
        }
    }

    /// Whether only Mixture-of-Experts models have this part (the EP all-to-all: 0 for dense
    /// models and in reference mode).
    pub fn moe_only(self) -> bool {
        matches!(self, TimePart::EpComm)
    }

    /// The parts a chart or table of `totals` shows, in [`TimePart::ALL`] order: every part but a
    /// [`Self::moe_only`] one that is 0 in all of them (a dense model has no EP all-to-all to
    /// show). Exports list every part.
    pub fn shown<'a>(totals: impl IntoIterator<Item = &'a Totals>) -> Vec<TimePart> {
        let totals: Vec<&Totals> = totals.into_iter().collect();
        TimePart::ALL.into_iter().filter(|p| !p.moe_only() || totals.iter().any(|t| p.of(t) != 0.0)).collect()
    }

    /// This part of `t` [s].
    pub fn of(self, t: &Totals) -> f64 {
        match self {
            TimePart::Compute => t.t_comp,
            TimePart::ExposedMemory => t.t_mem,
            TimePart::TpComm => t.t_tp_comm,
            TimePart::EpComm => t.t_ep_comm,
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

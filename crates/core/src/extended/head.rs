//! The parts outside the transformer blocks: the embedding lookup on the first pipeline stage and,
//! on the last, the final norm, the output head (a `h × V` matmul, split over tensor parallelism by
//! the vocabulary) and the cross-entropy loss. Reference mode has none of them (quirk Q15).

use super::layout::Layout;
use super::pricing::{Pass, Pricing};
use super::workload::Workload;
use crate::vocab::CollectiveKind;

/// Bytes moved per logit by the loss (forward and backward together): read the 16-bit logit, write
/// and read the FP32 softmax, write the 16-bit gradient.
const LOSS_BYTES_PER_LOGIT_FP32: f64 = 4.0 + 4.0;

/// Cost of the embedding (first stage) or of the head with its loss (last stage), one micro-batch.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EndCost {
    /// Forward pass.
    pub fwd: Pass,
    /// Backward pass.
    pub bwd: Pass,
    /// Parameters on this device [count].
    pub parameters: f64,
    /// Activations kept for the backward pass [B] (the logits are priced by the memory model).
    pub activation_bytes: f64,
}

/// The embedding of one micro-batch: a gather of `tokens × h` rows (a scatter-add backward) and,
/// under tensor parallelism, the reduce-scatter (all-gather backward) of the vocabulary-parallel
/// lookup. Zero when the vocabulary is unknown or the switch is off.
pub fn embedding_cost(w: &Workload, layout: &Layout, p: &Pricing) -> EndCost {
    let Some(_) = w.vocab.filter(|_| p.opts.model.embeddings_and_head) else { return EndCost::default() };
    let tokens = layout.local_tokens(w);
    let es = p.hw.element_bytes;
    let rows = tokens * w.hidden as f64 * es;
    let tp = tp_collective(layout, p, rows);
    EndCost {
        fwd: p.elementwise(2.0 * rows) + Pass { tp_comm_s: tp, ..Pass::default() },
        bwd: p.elementwise(3.0 * rows) + Pass { tp_comm_s: tp, ..Pass::default() },
        parameters: w.vocab_parameters() / layout.tp as f64,
        activation_bytes: 0.0,
    }
}

/// The final norm, output head and loss of one micro-batch on the last stage.
pub fn head_cost(w: &Workload, layout: &Layout, p: &Pricing) -> EndCost {
    head_work(w, layout, p).map_or_else(EndCost::default, |h| h.priced(p))
}

/// The head laid out: what its price reads besides the compute rates ([`head_cost`]; a fit prices
/// it again at other rates, [`super::timing`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HeadWork {
    /// The output matmul `(m × k)·(k × n)`: tokens, hidden width, local vocabulary.
    matmul: (f64, f64, f64),
    /// The norm and the loss, forward and backward.
    elementwise: (Pass, Pass),
    /// The tensor-parallel gather of its input [s].
    gather_s: f64,
    /// Parameters on this device [count].
    parameters: f64,
}

/// The head of `w` under `layout` (`None` without a vocabulary or with the switch off).
pub(crate) fn head_work(w: &Workload, layout: &Layout, p: &Pricing) -> Option<HeadWork> {
    let vocab = w.vocab.filter(|_| p.opts.model.embeddings_and_head)?;
    let tokens = layout.local_tokens(w);
    let tp = layout.tp as f64;
    let (h, es) = (w.hidden as f64, p.hw.element_bytes);
    let v_local = vocab as f64 / tp;
    let logits = tokens * v_local;
    let norm = 2.0 * h * tokens / tp * es;
    let loss = logits * (2.0 * es + LOSS_BYTES_PER_LOGIT_FP32);
    Some(HeadWork {
        matmul: (tokens, h, v_local),
        elementwise: (p.elementwise(norm + loss / 2.0), p.elementwise(2.0 * norm + loss / 2.0)),
        gather_s: tp_collective(layout, p, tokens * h * es),
        // Tied embeddings on a single stage: the head is the embedding matrix, counted there.
        parameters: if w.tied_embeddings && layout.pp == 1 { 0.0 } else { w.vocab_parameters() / tp },
    })
}

impl HeadWork {
    /// Its cost at the rates of `p`.
    pub(crate) fn priced(&self, p: &Pricing) -> EndCost {
        let (m, k, n) = self.matmul;
        let matmul = p.linear(m, k, n);
        let gather = Pass { tp_comm_s: self.gather_s, ..Pass::default() };
        EndCost {
            fwd: matmul + self.elementwise.0 + gather,
            bwd: matmul.times(2.0) + self.elementwise.1 + gather,
            parameters: self.parameters,
            // The logits are held at the loss of one micro-batch only: `memory::logits_and_loss`.
            activation_bytes: 0.0,
        }
    }
}

/// One all-gather (or reduce-scatter: same price) of `bytes` over the tensor-parallel group [s].
fn tp_collective(layout: &Layout, p: &Pricing, bytes: f64) -> f64 {
    if layout.tp <= 1 {
        return 0.0;
    }
    p.collective(CollectiveKind::AllGather, bytes * 1e-9, layout.tp, layout.placement.tp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::{ExtendedOptions, ModelFeatures};

    #[test]
    fn head_flops_are_two_h_v_per_token_forward() {
        let w = Workload { seq_len: 4096, ..Workload::LLAMA3_8B };
        let hw = Hardware::from_params(&SystemParams::h200(), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        let layout = Layout::placed(2, 1, 1, 1, 1, 1, 8);
        let c = head_cost(&w, &layout, &p);
        let expect = 2.0 * 4096.0 * 4096.0 * 128256.0 / 2.0 * 1e-12;
        assert!((c.fwd.tflop - expect).abs() < 1e-9 * expect);
        assert!((c.bwd.tflop - 2.0 * expect).abs() < 1e-9 * expect);
        assert_eq!(c.parameters, 4096.0 * 128256.0 / 2.0);
        assert!(c.fwd.tp_comm_s > 0.0);
        let off = ExtendedOptions { model: ModelFeatures { embeddings_and_head: false, ..opts.model }, ..opts };
        assert_eq!(head_cost(&w, &layout, &Pricing { hw: &hw, opts: &off }), EndCost::default());
        assert_eq!(embedding_cost(&Workload { vocab: None, ..w }, &layout, &p), EndCost::default());
    }
}

//! The published analytical performance model ("reference mode"): a port of the model of
//! Subramanian et al., PMBS'24 (arXiv 2410.00273; code: ShashankSubramanian/transformer-perf-estimates
//! at 54278b0), as restated in `spec/reference-model.md`. It reproduces the reference's outputs
//! bit for bit, including its quirks (each marked `// Quirk Qn` where it lives, so that a corrected
//! mode can switch it in one place):
//!
//! | quirk | where |
//! |---|---|
//! | Q1 LayerNorm2D width `⌊l/m1⌋` | `layers/norm.rs` |
//! | Q2 2D search uses `sa_2d_seqp` | `block.rs` |
//! | Q3 free slow pipeline links | `parallel.rs` |
//! | Q4 allreduce doubling only across domains | `collective.rs` |
//! | Q5 20 µs overhead, 0.8 efficiency | `timing.rs` |
//! | Q6 tensor-core factor in flash attention | `layers/attention.rs` |
//! | Q7 bubble includes PP communication | `totals.rs` |
//! | Q8 memory model | `totals.rs` |
//! | Q9 bias shards | `block.rs` |
//! | Q10 floors, Q11 FLOP conventions, Q17 exact integers | `layers/mod.rs` |
//! | Q12 intensity is a time ratio | `timing.rs` |
//! | Q16 tie order | `crate::search` |
//! | Q18 unused knobs | `json.rs` |
//!
//! Units: TFLOP, GB (1e9 bytes), GB/s, TFLOP/s, seconds, unless a name says otherwise.

pub mod block;
pub mod candidate;
pub mod collective;
pub mod evaluate;
pub mod json;
pub mod layers;
pub mod machine;
pub mod parallel;
pub mod summary;
pub mod timing;
pub mod totals;

pub use block::{BlockShape, BlockSums};
pub use collective::Collective;
pub use evaluate::{Evaluation, Evaluator, LayerRow, evaluate};
pub use machine::Machine;
pub use parallel::{DpStats, PpStats};
pub use summary::{ModelSummary, model_summary, model_summary_on};

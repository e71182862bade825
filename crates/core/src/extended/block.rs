//! One transformer block on one device for one micro-batch, summed from its operations
//! ([`super::ops`]): forward and backward passes, the recomputation's extra work, parameters and
//! the activations kept for the backward pass under each recomputation policy. The counting
//! conventions are documented with the operations.
//!
//! **Kernel issue time.** A GPU runs the kernels of a pass only as fast as the host issues them:
//! each operation is at least one kernel launched from the framework's Python loop, which costs
//! the CPU [`EAGER_HOST_S`] per operation under an eager PyTorch stack (modules, dispatch,
//! autograd, `cudaLaunchKernel`; [`COMPILED_HOST_S`] for a compiled stack) while the GPU runs the
//! previous ones. A pass therefore lasts at least its kernel count times that time: the
//! floor that makes the blocks of small models (hidden 1,024–2,048, a few µs of GPU work per
//! kernel under tensor parallelism) host-bound, and that large blocks (milliseconds of GPU work)
//! never reach. Kernels per operation: one forward; backward two for a weight matmul (input and
//! weight gradients), one for the others; recomputation one per operation run again. What the
//! floor adds is exposed non-matrix time (`memory_s`).

use super::activation_offload::{OffloadCost, exposed_s, offload_of};
use super::attention::attention_operations;
use super::layer_python::dense_layer_python_s;
use super::layout::Layout;
use super::ops::{OpKind, Operation, fp8_casts};
use super::options::Recompute;
use super::pricing::{Pass, Pricing};
use super::sublayer::mlp_operations;
use super::workload::Workload;

pub use super::ops::FLASH_BACKWARD_FACTOR;
pub use super::pricing::{COMPILED_HOST_S, EAGER_HOST_S, host_time_per_operation_s};

/// `pass` with its time raised to at least `kernels · host_s` (the shortfall added to its exposed
/// non-matrix time); `host_s` [s] from [`host_time_per_operation_s`].
pub fn issue_bound(pass: Pass, kernels: f64, host_s: f64) -> Pass {
    let short = kernels * host_s - pass.time();
    if short > 0.0 { Pass { memory_s: pass.memory_s + short, ..pass } } else { pass }
}

/// The cost of one block on one device for one micro-batch.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BlockCost {
    /// Forward pass (matmuls, attention, element-wise, TP collectives, exposed CP ring).
    pub fwd: Pass,
    /// Backward pass, without recomputation.
    pub bwd: Pass,
    /// Extra work of activation recomputation (a forward when `Full`).
    pub recompute: Pass,
    /// Parameters of the block held by this device before any ZeRO sharding [count].
    pub parameters: f64,
    /// Activations kept for the backward pass without recomputation [B].
    pub activation_bytes: f64,
    /// Activations kept with selective recomputation [B].
    pub selective_bytes: f64,
    /// The block's input, all that full recomputation keeps [B].
    pub input_bytes: f64,
    /// Activations kept under torchtitan's operator-level policy ([`Recompute::Op`]) [B].
    pub op_bytes: f64,
    /// Parameters of the block's linear layers (matmuls) on this device [count].
    pub linear_parameters: f64,
}

impl BlockCost {
    /// Forward time [s].
    pub fn fwd_s(&self) -> f64 {
        self.fwd.time()
    }

    /// Backward time including recomputation [s].
    pub fn bwd_s(&self) -> f64 {
        self.bwd.time() + self.recompute.time()
    }

    /// Activations this block keeps per micro-batch under the recomputation mode [B].
    pub fn kept_bytes(&self, recompute: Recompute) -> f64 {
        match recompute {
            Recompute::Full => self.input_bytes,
            Recompute::Selective => self.selective_bytes,
            Recompute::None => self.activation_bytes,
            Recompute::Op => self.op_bytes,
            // That share of the blocks keeps its input, the rest every activation.
            Recompute::Partial(s) => self.activation_bytes + s.fraction() * (self.input_bytes - self.activation_bytes),
        }
    }

    /// The block with its activation offload `o` ([`super::activation_offload`]): each pass adds
    /// the copy time its own compute does not hide (memory-bound time), the offloaded bytes leave
    /// its kept activations; unchanged without one.
    pub(crate) fn offloaded(mut self, o: Option<OffloadCost>) -> BlockCost {
        let Some(o) = o else { return self };
        let (fwd_s, bwd_s) = (self.fwd_s(), self.bwd_s());
        self.fwd.memory_s += exposed_s(o.copy_s, fwd_s);
        self.bwd.memory_s += exposed_s(o.copy_s, bwd_s);
        self.activation_bytes -= o.kept.none;
        self.selective_bytes -= o.kept.selective;
        self.input_bytes -= o.kept.full;
        self.op_bytes -= o.kept.op;
        self
    }

    /// The sums of a list of operations under the recomputation policy `recompute`.
    /// Each pass lasts at least its kernels' issue time at `host_s` [s] each ([`issue_bound`]).
    pub fn of_operations(ops: &[Operation], recompute: Recompute, host_s: f64) -> BlockCost {
        let (c, kernels) = BlockCost::sums(ops, recompute);
        c.issue_bounded(kernels, host_s)
    }

    /// The sums of `ops` before the issue floor, with their kernel counts `[forward, backward,
    /// recomputation]` ([`Self::of_operations`] is [`Self::issue_bounded`] of them; sums of parts
    /// of a list add up to the list's in real arithmetic).
    #[inline]
    pub(crate) fn sums(ops: &[Operation], recompute: Recompute) -> (BlockCost, [f64; 3]) {
        BlockCost::sums_after((BlockCost::default(), [0.0; 3]), ops, recompute)
    }

    /// [`Self::sums`] of a list whose first operations summed to `before` (their `sums`), given
    /// the rest `ops`: the same fold, continued, so equal bit for bit to `sums` of the whole list.
    #[inline]
    pub(crate) fn sums_after(
        before: (BlockCost, [f64; 3]),
        ops: &[Operation],
        recompute: Recompute,
    ) -> (BlockCost, [f64; 3]) {
        let (mut c, [mut fwd_kernels, mut bwd_kernels, mut again_kernels]) = before;
        for op in ops {
            c.fwd += op.fwd;
            c.bwd += op.bwd;
            fwd_kernels += if op.fwd.time() > 0.0 { 1.0 } else { 0.0 };
            bwd_kernels += match op.kind {
                _ if op.bwd.time() <= 0.0 => 0.0,
                OpKind::Matmul => 2.0,
                _ => 1.0,
            };
            let again = op.recomputed(recompute);
            if again > 0.0 {
                c.recompute += op.fwd.times(again);
                // Whole-block levels rerun that share of the blocks, each with all its kernels:
                // on average the share of the kernels (partial); selective and operator-level
                // policies rerun their operations in every block.
                again_kernels += if op.fwd.time() > 0.0 { recompute.block_share().unwrap_or(1.0) } else { 0.0 };
            }
            c.parameters += op.parameters;
            c.activation_bytes += op.kept.none;
            c.selective_bytes += op.kept.selective;
            c.input_bytes += op.kept.full;
            c.op_bytes += op.kept.op;
            if op.kind == OpKind::Matmul {
                c.linear_parameters += op.parameters;
            }
        }
        (c, [fwd_kernels, bwd_kernels, again_kernels])
    }

    /// The sums with each pass raised to its kernels' issue time ([`issue_bound`]; the
    /// recomputation only when it runs a kernel).
    #[inline]
    pub(crate) fn issue_bounded(
        mut self,
        [fwd_kernels, bwd_kernels, again_kernels]: [f64; 3],
        host_s: f64,
    ) -> BlockCost {
        self.fwd = issue_bound(self.fwd, fwd_kernels, host_s);
        self.bwd = issue_bound(self.bwd, bwd_kernels, host_s);
        if again_kernels > 0.0 {
            self.recompute = issue_bound(self.recompute, again_kernels, host_s);
        }
        self
    }

    /// [`Self::issue_bounded`] with the forward and the recomputation raised to their kernels'
    /// issue time plus the layer's Python that launches no kernel, `python_s` `[forward,
    /// recomputation]` [s] ([`super::layer_python::layer_python_s`]; the backward's is not
    /// counted); equal to [`Self::issue_bounded`] at 0.
    #[inline]
    pub(crate) fn issue_bounded_layer(self, kernels: [f64; 3], host_s: f64, python_s: [f64; 2]) -> BlockCost {
        let (fwd, recompute) = (self.fwd, self.recompute);
        let mut c = self.issue_bounded(kernels, host_s);
        if python_s[0] > 0.0 {
            c.fwd = issue_bound(fwd, 1.0, kernels[0] * host_s + python_s[0]);
        }
        if python_s[1] > 0.0 && kernels[2] > 0.0 {
            c.recompute = issue_bound(recompute, 1.0, kernels[2] * host_s + python_s[1]);
        }
        c
    }
}

/// Prices one block: the sums of its [`operations`].
/// Each pass lasts at least its kernels' issue time plus the layer's Python
/// ([`BlockCost::issue_bounded_layer`]) and, with RoPE unfused, the forward's further RoPE
/// launches ([`super::unfused_rope::layer_host_s`]; the backward's join the evaluator's floor).
pub fn block_cost(w: &Workload, layout: &Layout, p: &Pricing) -> BlockCost {
    let ops = operations(w, layout, p);
    let (sums, kernels) = BlockCost::sums(&ops, p.opts.recompute);
    let [python_fwd, python_again] = dense_layer_python_s(p.hw, p.opts);
    let [rope_fwd, rope_again, _] = super::unfused_rope::layer_host_s(p);
    sums.issue_bounded_layer(kernels, p.host_time_per_operation_s(), [python_fwd + rope_fwd, python_again + rope_again])
        .offloaded(offload_of(&ops, p))
}

/// Every operation of one block (see the module documentation).
pub fn operations(w: &Workload, layout: &Layout, p: &Pricing) -> Vec<Operation> {
    let mut ops = attention_operations(w, layout, p);
    ops.extend(mlp_operations(w, layout, p));
    let linear: f64 = ops.iter().filter(|o| o.kind == OpKind::Matmul).map(|o| o.parameters).sum();
    ops.extend(fp8_casts(w, layout, p, linear));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::{ExtendedOptions, ModelFeatures};
    use crate::extended::stack::Stack;

    fn gpt(seq: u64) -> Workload {
        Workload {
            seq_len: seq,
            hidden: 4096,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            layers: 32,
            ffn_hidden: 16384,
            gated_mlp: false,
            vocab: None,
            moe: None,
            mla: None,
            mtp_layers: 0,
            tied_embeddings: false,
            sliding_window: None,
        }
    }

    fn price(w: &Workload, layout: &Layout, opts: ExtendedOptions) -> BlockCost {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        block_cost(w, layout, &Pricing { hw: &hw, opts: &opts })
    }

    fn one_gpu(mbs: u64) -> Layout {
        Layout::placed(1, 1, 1, 1, mbs, mbs, 8)
    }

    #[test]
    fn forward_flops_by_hand() {
        // h = 4096, f = 4h, s = 2048, mbs 1, causal: linear 2·s·(4h² + 2·h·f) = 24·s·h²,
        // attention 4·s²·h/2.
        let w = gpt(2048);
        let c = price(&w, &one_gpu(1), ExtendedOptions::realistic());
        let (s, h) = (2048.0, 4096.0);
        let expect = (24.0 * s * h * h + 2.0 * s * s * h) * 1e-12;
        assert!((c.fwd.tflop - expect).abs() < 1e-9 * expect, "{} vs {expect}", c.fwd.tflop);
        // Backward: linear twice, attention 2.5 times.
        let expect_bwd = (48.0 * s * h * h + 2.5 * 2.0 * s * s * h) * 1e-12;
        assert!((c.bwd.tflop - expect_bwd).abs() < 1e-9 * expect_bwd);
    }

    #[test]
    fn weight_sparsity_scales_only_the_weight_matmuls_on_wafer_scale_parts() {
        // h = 4096, f = 4h, s = 2048, 90 % sparse: linear 0.1·24·s·h², attention 2·s²·h unchanged;
        // backward: linear 0.1·48·s·h², attention 2.5·2·s²·h.
        let w = gpt(2048);
        let opts = ExtendedOptions {
            model: ModelFeatures { weight_sparsity: 0.9, ..ModelFeatures::realistic() },
            ..ExtendedOptions::realistic()
        };
        let mut hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let dense = block_cost(&w, &one_gpu(1), &Pricing { hw: &hw, opts: &ExtendedOptions::realistic() });
        let gpu = block_cost(&w, &one_gpu(1), &Pricing { hw: &hw, opts: &opts });
        assert_eq!(gpu, dense, "a GPU prices unstructured sparse weights as dense");
        hw.unstructured_sparsity = true;
        let c = block_cost(&w, &one_gpu(1), &Pricing { hw: &hw, opts: &opts });
        let (s, h) = (2048.0, 4096.0);
        let fwd = (0.1 * 24.0 * s * h * h + 2.0 * s * s * h) * 1e-12;
        let bwd = (0.1 * 48.0 * s * h * h + 2.5 * 2.0 * s * s * h) * 1e-12;
        assert!((c.fwd.tflop - fwd).abs() < 1e-9 * fwd, "{} vs {fwd}", c.fwd.tflop);
        assert!((c.bwd.tflop - bwd).abs() < 1e-9 * bwd);
        // Memory stays dense.
        assert_eq!((c.parameters, c.activation_bytes), (dense.parameters, dense.activation_bytes));
    }

    #[test]
    fn causal_mask_halves_the_attention_flops() {
        let w = gpt(8192);
        let causal = price(&w, &one_gpu(1), ExtendedOptions::realistic());
        let full = price(
            &w,
            &one_gpu(1),
            ExtendedOptions {
                model: ModelFeatures { causal: false, ..ModelFeatures::realistic() },
                ..ExtendedOptions::realistic()
            },
        );
        let att_full = 4.0 * 8192.0 * 8192.0 * 4096.0 * 1e-12;
        assert!(((full.fwd.tflop - causal.fwd.tflop) - att_full / 2.0).abs() < 1e-9);
    }

    #[test]
    fn swiglu_adds_the_third_matrix_and_gqa_narrows_kv() {
        let llama = Workload { gated_mlp: true, kv_heads: 8, ffn_hidden: 14336, ..gpt(4096) };
        let on = price(&llama, &one_gpu(1), ExtendedOptions::realistic());
        let off = price(
            &llama,
            &one_gpu(1),
            ExtendedOptions {
                model: ModelFeatures { gated_mlp: false, grouped_query_attention: false, ..ModelFeatures::realistic() },
                ..ExtendedOptions::realistic()
            },
        );
        let (s, h, f) = (4096.0, 4096.0, 14336.0);
        // Gate matrix: +2·s·h·f forward; GQA: K and V of 8·128 = 1024 columns instead of 4096.
        let delta = (2.0 * s * h * f - 2.0 * s * h * 2.0 * (4096.0 - 1024.0)) * 1e-12;
        assert!(((on.fwd.tflop - off.fwd.tflop) - delta).abs() < 1e-9, "{}", on.fwd.tflop - off.fwd.tflop);
        assert_eq!(on.parameters - off.parameters, h * f - 2.0 * h * (4096.0 - 1024.0));
    }

    #[test]
    fn a_tiny_block_is_bound_by_kernel_issue() {
        // h = 256, 128 tokens, one device: microseconds of GPU work per pass. Its ten operations
        // (two norms, Q/K/V, attention, output projection, two residual adds, MLP in, activation,
        // MLP out) issue 10 kernels forward and 14 backward (4 matmuls × 2 + 6): 1.3 ms and
        // 1.82 ms; under the Megatron stack the forward adds the layer's Python, 228.466 µs
        // (`layer_python`: 13 · 2.17 + 4 · 62.58 / 1.25 µs), 1.528466 ms. Full recomputation
        // issues the forward's 10 again and runs the Python again.
        let w = Workload { hidden: 256, heads: 4, kv_heads: 4, head_dim: 64, ffn_hidden: 1024, ..gpt(128) };
        let opts = ExtendedOptions { recompute: Recompute::Full, ..ExtendedOptions::realistic() };
        let c = price(&w, &one_gpu(1), opts);
        let python = 228.466e-6;
        assert!((c.fwd.time() - (10.0 * EAGER_HOST_S + python)).abs() < 1e-15, "{}", c.fwd.time());
        assert!((c.bwd.time() - 14.0 * EAGER_HOST_S).abs() < 1e-15, "{}", c.bwd.time());
        assert!((c.recompute.time() - (10.0 * EAGER_HOST_S + python)).abs() < 1e-15);
        // Under DeepSpeed (its layers are not counted) the floor is the kernels' issue alone.
        let ds = ExtendedOptions { stack: Stack::DeepSpeed, ..opts };
        assert!((price(&w, &one_gpu(1), ds).fwd.time() - 10.0 * EAGER_HOST_S).abs() < 1e-15);
        // A 4096-wide block at 8,192 tokens takes milliseconds: the floor does not touch it.
        let big = price(&gpt(8192), &one_gpu(1), ExtendedOptions::realistic());
        assert!(big.fwd.time() > 2.0 * 10.0 * EAGER_HOST_S, "{}", big.fwd.time());
        let ops = operations(
            &gpt(8192),
            &one_gpu(1),
            &Pricing {
                hw: &Hardware::from_params(&SystemParams::h200().with_domain_size(8), false),
                opts: &ExtendedOptions::realistic(),
            },
        );
        let sum: f64 = ops.iter().map(|o| o.fwd.time()).sum();
        assert!((big.fwd.time() - sum).abs() < 1e-12 * sum);
        assert_eq!(issue_bound(Pass { compute_s: 1.0, ..Pass::default() }, 3.0, EAGER_HOST_S).time(), 1.0);
    }

    #[test]
    fn the_host_time_per_operation_follows_the_parts_host() {
        // 130 µs on a DGX H100 host, × 1.53 on a DGX A100's (198.9 µs), × 1.25 on Grace
        // (162.5 µs); a compiled stack's 10 µs scales the same way (15.3 µs on the A100 host).
        let hw = |id: &str| {
            let sys = crate::catalog::find_system(id).unwrap();
            Hardware::from_catalog(sys, crate::catalog::Precision::Bf16, true, &Default::default()).unwrap()
        };
        let (a100, gb200, h100) = (hw("nvidia_a100_sxm4_80gb"), hw("nvidia_gb200_nvl72"), hw("nvidia_h100_sxm5_80gb"));
        let eager = Stack::Megatron;
        assert!((host_time_per_operation_s(&h100, eager) - 130e-6).abs() < 1e-18);
        assert!((host_time_per_operation_s(&a100, eager) - 198.9e-6).abs() < 1e-15);
        assert!((host_time_per_operation_s(&gb200, eager) - 162.5e-6).abs() < 1e-15);
        assert!((host_time_per_operation_s(&a100, Stack::Jax) - 15.3e-6).abs() < 1e-15);
    }

    #[test]
    fn full_recompute_adds_one_forward() {
        let w = gpt(2048);
        let none =
            price(&w, &one_gpu(2), ExtendedOptions { recompute: Recompute::None, ..ExtendedOptions::realistic() });
        let full =
            price(&w, &one_gpu(2), ExtendedOptions { recompute: Recompute::Full, ..ExtendedOptions::realistic() });
        assert_eq!(full.recompute, full.fwd);
        assert_eq!(none.recompute, Pass::default());
        assert!((full.bwd_s() - none.bwd_s() - none.fwd_s()).abs() < 1e-15);
        // Memory: only the block input is kept.
        assert!(full.kept_bytes(Recompute::Full) * 10.0 < none.kept_bytes(Recompute::None));
    }

    #[test]
    fn partial_recompute_is_its_share_of_full() {
        // A quarter of the forward again (Megatron's block method, 2 of 8 blocks per stage): a
        // quarter of full recomputation's extra forward, and activations 3/4 of everything plus
        // 1/4 of the block inputs.
        let w = gpt(2048);
        let quarter = Recompute::of_share(0.25);
        assert_eq!(quarter.block_share(), Some(0.25));
        let opts = |recompute| ExtendedOptions { recompute, ..ExtendedOptions::realistic() };
        let none = price(&w, &one_gpu(2), opts(Recompute::None));
        let part = price(&w, &one_gpu(2), opts(quarter));
        assert!((part.recompute.tflop - 0.25 * none.fwd.tflop).abs() < 1e-12 * none.fwd.tflop);
        assert!((part.recompute.time() - 0.25 * none.fwd.time()).abs() < 1e-12 * none.fwd.time());
        let kept = 0.75 * none.activation_bytes + 0.25 * none.input_bytes;
        assert!((part.kept_bytes(quarter) - kept).abs() < 1e-9 * kept);
        // The forward and backward themselves do not change.
        assert_eq!((part.fwd, part.bwd), (none.fwd, none.bwd));
    }

    #[test]
    fn tensor_and_context_parallel_split_the_work() {
        let w = gpt(8192);
        let one = price(&w, &one_gpu(1), ExtendedOptions::realistic());
        let tp4 = price(&w, &Layout::placed(4, 1, 1, 1, 1, 1, 8), ExtendedOptions::realistic());
        assert!((tp4.fwd.tflop * 4.0 - one.fwd.tflop).abs() < 1e-9 * one.fwd.tflop);
        assert!(tp4.fwd.tp_comm_s > 0.0 && one.fwd.tp_comm_s == 0.0);
        let cp2 = price(&w, &Layout::placed(1, 2, 1, 1, 1, 1, 8), ExtendedOptions::realistic());
        assert!((cp2.fwd.tflop * 2.0 - one.fwd.tflop).abs() < 1e-9 * one.fwd.tflop);
        // Without the ring overlap the K/V all-gather is exposed in full.
        let gathered = price(
            &w,
            &Layout::placed(1, 2, 1, 1, 1, 1, 8),
            ExtendedOptions { cp_ring_overlap: false, ..ExtendedOptions::realistic() },
        );
        assert!(gathered.fwd.cp_comm_s > cp2.fwd.cp_comm_s);
    }
}

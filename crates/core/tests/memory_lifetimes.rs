//! When tensors live, by hand: gradients freed between steps (PyTorch's `zero_grad`), FSDP's root
//! unit kept gathered through the loss, and what eager PyTorch kernels keep beyond fused ones.
//! Each test states the bytes it expects and where they come from.

use fmperf_core::SystemParams;
use fmperf_core::extended::block_operations::block_operations;
use fmperf_core::extended::{
    ExtendedOptions, Fusion, Hardware, HardwareChoices, Layout, MemoryEstimate, OptimizerStates, Recompute, Sharding,
    Workload, memory_estimate,
};

fn hw() -> Hardware {
    Hardware::from_params(&SystemParams::h200().with_domain_size(8), true)
}

fn estimate(w: &Workload, layout: Layout, opts: ExtendedOptions) -> MemoryEstimate {
    memory_estimate(w, &hw(), &layout, &opts).unwrap()
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-9), "{a} vs {b}");
}

/// Pure BF16 on one device without overheads, the 32 blocks of Llama 3 8B and no vocabulary.
fn single_device(recompute: Recompute, grads_freed: bool) -> ExtendedOptions {
    ExtendedOptions {
        hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
        sharding: Sharding::Ddp,
        optimizer_states: OptimizerStates::PureBf16,
        recompute,
        grads_freed,
        ..ExtendedOptions::realistic()
    }
}

#[test]
fn freed_gradients_are_not_held_at_the_loss() {
    let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
    let params = 32.0 * w.block_parameters(true, true);
    // One 8192-token sequence per step: 2 B of gradients per parameter (16.7 GB) against the
    // activations of 32 blocks without recomputation (more than that).
    let one = Layout::placed(1, 1, 1, 1, 1, 1, 8);
    let kept = estimate(&w, one, single_device(Recompute::None, false));
    let freed = estimate(&w, one, single_device(Recompute::None, true));
    close(kept.part("gradients"), params * 2.0 * 1e-9);
    assert!(kept.part("activations") > kept.part("gradients"));
    // Freed: the loss is the peak, with weights (2 B) and Adam moments (4 B) but no gradient.
    assert_eq!(freed.part("gradients"), 0.0);
    close(freed.allocated_gb, kept.allocated_gb - params * 2.0 * 1e-9);
    // Under full recomputation the activations (one block input per block plus the block being
    // recomputed) are smaller than the gradients: the backward's end is the peak, where the
    // gradients stand in place of the freed activations, so the figure is weights + moments +
    // gradients: 8 B per parameter.
    let full = estimate(&w, one, single_device(Recompute::Full, true));
    close(full.allocated_gb, params * 8.0 * 1e-9);
    // Two micro-batches per step: the first one's gradients are held through the second
    // one's forward, freed or not.
    let two = Layout::placed(1, 1, 1, 1, 1, 2, 8);
    close(
        estimate(&w, two, single_device(Recompute::None, true)).allocated_gb,
        estimate(&w, two, single_device(Recompute::None, false)).allocated_gb,
    );
}

#[test]
fn fsdp_root_unit_stays_gathered_through_the_loss() {
    // Llama 3 8B with its 128,256-token vocabulary (untied): the root unit holds the embedding and
    // the output head, 2 × 128,256 × 4,096 parameters, gathered in 16 bits beside the last block.
    let w = Workload::LLAMA3_8B;
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let opts = ExtendedOptions {
        hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
        sharding: Sharding::Zero3,
        ..ExtendedOptions::realistic()
    };
    let e = estimate(&w, layout, opts);
    let root = 2.0 * 128_256.0 * 4096.0;
    close(e.part("gathered_layers"), (w.block_parameters(true, true) + root) * 2.0 * 1e-9);
}

#[test]
fn eager_kernels_keep_the_norms_upcast_and_the_silu_output() {
    // One Llama 3 8B block (h 4096, f 14336), one 8192-token sequence, BF16: eager PyTorch keeps,
    // beyond the fused count, 4 B per element of h for each of the two norms (the FP32 upcast and
    // the normalised output in place of the 16-bit input) and the SwiGLU's silu output (2 B per
    // element of f).
    let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let kept = |fusion, policy| {
        let opts = ExtendedOptions { fusion, recompute: policy, ..ExtendedOptions::realistic() };
        block_operations(&w, &hw(), &layout, &opts).unwrap().iter().map(|o| o.kept.under(policy)).sum::<f64>()
    };
    let (h, f, t) = (4096.0, 14336.0, 8192.0);
    let extra = t * (2.0 * 4.0 * h + 2.0 * f);
    for policy in [Recompute::None, Recompute::Selective] {
        close(kept(Fusion::Eager, policy) - kept(Fusion::Fused, policy), extra);
    }
    // Policies that recompute the element-wise work keep nothing more.
    for policy in [Recompute::Op, Recompute::Full] {
        close(kept(Fusion::Eager, policy), kept(Fusion::Fused, policy));
    }
}

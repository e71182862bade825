//! What the CLI and the page ask core by name instead of branching on a model's MoE-ness (tidy
//! rule 14, `moe_branches_past_core_only_shrink`): the estimate's MoE lists, the `--moe` check,
//! a layout's expert degrees as text and which blocks are MoE blocks. Each answers for a dense and
//! an MoE model alike; the dense one gets nothing to show or an error, never a guess.

use fmperf_core::SystemParams;
use fmperf_core::extended::moe::MoeTimePart;
use fmperf_core::extended::{ExtendedOptions, Hardware, Layout, Workload, evaluate};
use fmperf_core::moe_shape::{MoeShape, Router};

/// A small MoE (as `moe_evaluate.rs`'s): h = 1024, 8 heads, 4 blocks with the first dense, 16
/// experts of width 512, top-2, one shared expert, SwiGLU, sequence 1024, no vocabulary.
fn tiny_moe() -> Workload {
    let moe = MoeShape {
        experts: 16,
        expert_ffn: 512,
        top_k: 2,
        shared_experts: 1,
        shared_ffn: 512,
        gated: true,
        first_dense: 1,
        moe_every: 1,
        router: Router::Softmax,
    };
    Workload {
        seq_len: 1024,
        hidden: 1024,
        heads: 8,
        kv_heads: 8,
        head_dim: 128,
        layers: 4,
        ffn_hidden: 4096,
        vocab: None,
        moe: Some(moe),
        ..Workload::LLAMA3_8B
    }
}

#[test]
fn the_estimates_moe_lists_are_empty_for_a_dense_model() {
    let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let opts = ExtendedOptions::realistic();
    // MoE: every time part in `MoeTimePart::ALL`'s order, each the breakdown's own figure.
    let moe = evaluate(&tiny_moe(), &hw, &layout.with_experts(8, 1), &opts).unwrap();
    let times = moe.moe_times();
    assert_eq!(times.iter().map(|(p, _)| *p).collect::<Vec<_>>(), MoeTimePart::ALL.to_vec());
    let b = moe.moe.unwrap();
    assert!(times.iter().all(|(p, s)| *s == p.of(&b.times)), "{times:?}");
    // Six figures: three expert memory parts, then blocks, tokens per expert, dropped share.
    let figures = moe.moe_figures();
    let names: Vec<&str> = figures.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[3..], ["MoE / dense blocks", "tokens per expert", "dropped [%]"]);
    assert!(names[..3].iter().all(|n| n.starts_with("expert ") && n.ends_with(" [GB]")), "{names:?}");
    // 4 blocks, the first dense, on one stage: 3 MoE and 1 dense.
    assert_eq!(figures[3].1, "3 / 1");
    assert_eq!(figures[5].1, format!("{:.1}", 100.0 * b.dropped_fraction));
    // The same shape without experts: nothing to list.
    let dense = evaluate(&Workload { moe: None, ..tiny_moe() }, &hw, &layout, &opts).unwrap();
    assert_eq!((dense.moe_times(), dense.moe_figures()), (Vec::new(), Vec::new()));
}

#[test]
fn the_model_checks_moe_switches_and_says_which_blocks_have_experts() {
    let (moe, dense) = (tiny_moe(), Workload { moe: None, ..tiny_moe() });
    assert!(moe.check_moe_switches("ep=2").is_ok());
    let e = dense.check_moe_switches("ep=2").unwrap_err();
    assert!(e.is_at("moe") && e.to_string().contains("dense (no experts)"), "{e}");
    // First block dense (`first_dense` 1), the other three MoE; no block of a dense model.
    let blocks = |w: &Workload| (0..4).map(|i| w.moe_block(i).is_some()).collect::<Vec<_>>();
    assert_eq!(blocks(&moe), [false, true, true, true]);
    assert_eq!(blocks(&dense), [false; 4]);
    // A layout's expert degrees, written only where there are experts.
    let y = Layout::placed(1, 1, 1, 8, 1, 8, 8).with_experts(8, 1);
    assert_eq!((y.expert_degrees_text(&moe), y.expert_degrees_text(&dense)), (" · ep 8 · etp 1".into(), String::new()));
}

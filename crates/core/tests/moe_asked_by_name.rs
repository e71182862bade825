//! What the CLI and the page ask core by name instead of branching on a model's MoE-ness (tidy
//! rule 14, `moe_branches_past_core_only_shrink`): the estimate's MoE lists, the `--moe` check,
//! a layout's expert degrees as text and which blocks are MoE blocks. Each answers for a dense and
//! an MoE model alike; the dense one gets nothing to show or an error, never a guess.

use fmperf_core::SystemParams;
use fmperf_core::catalog::find_model;
use fmperf_core::extended::moe::MoeTimePart;
use fmperf_core::extended::{ExtendedOptions, Hardware, Layout, Workload, evaluate};
use fmperf_core::moe_shape::MoeShape;

/// Mixtral 8x7B (the catalog's: 8 experts of width 14336, top-2) cut to 6 blocks of sequence 1024,
/// the first dense and then every second an MoE block (blocks 2 and 4).
fn tiny_moe() -> Workload {
    let mixtral = Workload::from_catalog(find_model("mixtral-8x7b").unwrap()).unwrap();
    let moe = MoeShape { first_dense: 1, moe_every: 2, ..mixtral.moe.unwrap() };
    Workload { seq_len: 1024, layers: 6, vocab: None, moe: Some(moe), ..mixtral }
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
    // 6 blocks on one stage: blocks 2 and 4 MoE, the other 4 dense.
    assert_eq!(figures[3].1, "2 / 4");
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
    // Block 0 dense (`first_dense` 1), then every second one MoE (`moe_every` 2: (i − 1 + 1) % 2 =
    // 0 for i = 2, 4); no block of a dense model.
    let blocks = |w: &Workload| (0..6).map(|i| w.moe_block(i).is_some()).collect::<Vec<_>>();
    assert_eq!(blocks(&moe), [false, false, true, false, true, false]);
    assert_eq!(blocks(&dense), [false; 6]);
    // A layout's expert degrees, written only where there are experts.
    let y = Layout::placed(1, 1, 1, 8, 1, 8, 8).with_experts(8, 1);
    assert_eq!((y.expert_degrees_text(&moe), y.expert_degrees_text(&dense)), (" · ep 8 · etp 1".into(), String::new()));
}

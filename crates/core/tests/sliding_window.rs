//! Sliding-window attention (gpt-oss: a 128-token window in every other block) priced by hand:
//! the block's attention is split into the full blocks' share at the whole causal prefix and the
//! windowed blocks' share against the window, each at the attention kernel's rate for its key
//! length.

use fmperf_core::SystemParams;
use fmperf_core::extended::attention::attention_operations;
use fmperf_core::extended::efficiency::{KernelCurve, attention_kernel_fraction};
use fmperf_core::extended::pricing::Pricing;
use fmperf_core::extended::{ExtendedOptions, Hardware, Layout, Workload};
use fmperf_core::vocab::SlidingWindow;

/// gpt-oss-120b's attention (hidden 2880, 64 query heads of 64 channels, 8 KV heads) at 4,096
/// tokens, without its experts (the attention sub-layer does not read them).
fn gpt_oss(window: Option<SlidingWindow>) -> Workload {
    Workload {
        seq_len: 4096,
        hidden: 2880,
        heads: 64,
        kv_heads: 8,
        head_dim: 64,
        layers: 36,
        ffn_hidden: 2880,
        sliding_window: window,
        ..Workload::LLAMA3_8B
    }
}

const GPT_OSS_WINDOW: SlidingWindow = SlidingWindow { tokens: 128, full_every: Some(2) };

#[test]
fn window_shares_and_mean_keys_by_hand() {
    assert_eq!(GPT_OSS_WINDOW.windowed_share(), 0.5);
    assert_eq!(SlidingWindow { tokens: 4096, full_every: Some(6) }.windowed_share(), 1.0 - 1.0 / 6.0);
    assert_eq!(SlidingWindow { tokens: 128, full_every: Some(1) }.windowed_share(), 0.0);
    assert_eq!(SlidingWindow { tokens: 4096, full_every: None }.windowed_share(), 1.0);
    // 4,096 queries, window 128: the first 128 queries see 1…128 keys, the rest 128:
    // (4096·128 − 128²/2)/4096 = 128 − 2 = 126 keys on average.
    assert_eq!(GPT_OSS_WINDOW.mean_keys(4096.0), 126.0);
    // A window as long as the sequence is plain causal attention: s/2 keys.
    assert_eq!(SlidingWindow { tokens: 8192, full_every: Some(2) }.mean_keys(4096.0), 2048.0);
    // Bad windows are refused with the field named.
    let bad = gpt_oss(Some(SlidingWindow { tokens: 0, full_every: Some(2) })).validate().unwrap_err();
    assert!(bad.to_string().contains("sliding_window.tokens"), "{bad}");
    let bad = gpt_oss(Some(SlidingWindow { tokens: 128, full_every: Some(0) })).validate().unwrap_err();
    assert!(bad.to_string().contains("sliding_window.full_every"), "{bad}");
}

#[test]
fn window_attention_flops_and_time_by_hand() {
    let hw = Hardware::from_params(&SystemParams::h200(), true);
    let opts = ExtendedOptions::realistic();
    let p = Pricing { hw: &hw, opts: &opts };
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let op = |ops: &[fmperf_core::extended::ops::Operation], name: &str| ops.iter().find(|o| o.name == name).copied();

    let plain = attention_operations(&gpt_oss(None), &layout, &p);
    let windowed = attention_operations(&gpt_oss(Some(GPT_OSS_WINDOW)), &layout, &p);
    assert!(op(&plain, "attention_window").is_none());
    let (full, half, window) = (
        op(&plain, "attention").unwrap(),
        op(&windowed, "attention").unwrap(),
        op(&windowed, "attention_window").unwrap(),
    );

    // FLOPs forward: 4·s·k̄·a·d with the causal prefix (k̄ = s/2) in the full blocks (half of
    // them) and the window's 126 keys in the others.
    let (s, a, d) = (4096.0, 64.0, 64.0);
    let full_tflop = 4.0 * s * (s / 2.0) * a * d * 1e-12;
    assert!((full.fwd.tflop - full_tflop).abs() < 1e-12 * full_tflop);
    assert!((half.fwd.tflop - 0.5 * full_tflop).abs() < 1e-12 * full_tflop);
    let window_tflop = 0.5 * 4.0 * s * 126.0 * a * d * 1e-12;
    assert!((window.fwd.tflop - window_tflop).abs() < 1e-12 * window_tflop);
    // The full share's time is half the plain attention's (same rate).
    assert!((half.fwd.compute_s - 0.5 * full.fwd.compute_s).abs() < 1e-12);

    // The window's rate: η_att × the ceiling × the kernel's benchmark at 128 keys with its
    // causal diagonal tiles, × the size factor of the call's own 4,096 × 4,096 tokens.
    let h = opts.hardware;
    let size = (s / (s + h.attention_half_seq)).powi(2);
    let rate = h.attention_efficiency
        * hw.attention_ceiling_tflops
        * attention_kernel_fraction(KernelCurve::Native, 128.0, true)
        * size;
    assert!((window.fwd.compute_s - window_tflop / rate).abs() < 1e-9 * window.fwd.compute_s);
    assert!((window.bwd.compute_s - 2.5 * window_tflop / rate).abs() < 1e-9 * window.bwd.compute_s);
    // The 128-key calls run at a fraction of the 4,096-key rate (short key loops and the
    // diagonal tile), yet with 1/16 of the FLOPs the windowed blocks take well under the full
    // blocks' time: the block's attention is 0.5 + 0.5·(window / full) of the plain one.
    let ratio = (window.fwd.compute_s + half.fwd.compute_s) / full.fwd.compute_s;
    assert!(ratio > 0.5 && ratio < 0.8, "{ratio}");
    // What the attention keeps is unchanged (the same tensors in every block).
    assert_eq!(half.kept, full.kept);
    assert_eq!(window.kept.none, 0.0);

    // One full block in every one: no window at all, the plain pricing exactly.
    let none = attention_operations(&gpt_oss(Some(SlidingWindow { tokens: 128, full_every: Some(1) })), &layout, &p);
    assert_eq!(none, plain);
}

#[test]
fn gpt_oss_rows_read_their_window_from_the_attention_words() {
    use fmperf_core::validate::moe_runs::{MOE_RUNS_JSON, interpret_moe_row};
    let doc: serde_json::Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["id"] == "mb2602_gptoss120b_gb200_bf16_64").unwrap();
    // "gqa (alternating 128-token sliding-window / full causal layers, …)"
    let s = interpret_moe_row(row).unwrap();
    assert_eq!(s.workload.sliding_window, Some(GPT_OSS_WINDOW));
    assert!(s.notes.iter().any(|n| n.contains("sliding-window attention: 128 tokens in 1 of every 2 blocks")));
    // A model whose words name no window attends to the whole prefix in every block.
    let qwen = rows.iter().find(|r| r["id"] == "mb2602_qwen3_30b_b200_mxfp8_8").unwrap();
    assert_eq!(interpret_moe_row(qwen).unwrap().workload.sliding_window, None);
    // Words naming a window with a pattern other than alternation: one full block in every n.
    let mut custom = row.clone();
    custom["model"]["attention"] = "gqa, 1024-token sliding window, one full layer every 6".into();
    assert_eq!(
        interpret_moe_row(&custom).unwrap().workload.sliding_window,
        Some(SlidingWindow { tokens: 1024, full_every: Some(6) })
    );
}

#[test]
fn the_catalog_gpt_oss_models_carry_their_window_and_documents_round_trip_it() {
    use fmperf_core::catalog;
    for id in ["gpt-oss-20b", "gpt-oss-120b"] {
        let w = Workload::from_catalog(catalog::find_model(id).unwrap()).unwrap();
        assert_eq!(w.sliding_window, Some(GPT_OSS_WINDOW), "{id}");
    }
    let qwen = Workload::from_catalog(catalog::find_model("qwen3-30b-a3b").unwrap()).unwrap();
    assert_eq!(qwen.sliding_window, None);
    // A written model document: read, written and read again; a bad field is named.
    let text = r#"{"schema_version":1,"kind":"model","id":"x","seq_len":4096,"hidden":1024,"heads":8,
        "layers":4,"ffn_hidden":4096,"mlp":"swiglu","sliding_window":{"tokens":512,"full_every":6}}"#;
    let doc = fmperf_core::format::parse(text).unwrap();
    let again = fmperf_core::format::parse(&fmperf_core::format::to_json(&doc)).unwrap();
    assert_eq!(doc, again);
    assert!(fmperf_core::format::to_json(&doc).contains("\"sliding_window\""));
    let errs = fmperf_core::format::parse(&text.replace("\"full_every\":6", "\"full_every\":0")).unwrap_err();
    assert_eq!(errs[0].field(), Some("sliding_window.full_every"), "{errs:?}");
    // Without `full_every` every block attends through the window (Megatron-Core's default), and
    // the written document keeps it that way; without `tokens` the window is refused, named.
    let every = fmperf_core::format::parse(&text.replace(",\"full_every\":6", "")).unwrap();
    let written = fmperf_core::format::to_json(&every);
    assert!(written.contains("\"sliding_window\"") && !written.contains("full_every"), "{written}");
    assert_eq!(fmperf_core::format::parse(&written).unwrap(), every);
    let errs = fmperf_core::format::parse(&text.replace("\"tokens\":512,", "")).unwrap_err();
    assert_eq!(errs[0].field(), Some("sliding_window.tokens"), "{errs:?}");
}

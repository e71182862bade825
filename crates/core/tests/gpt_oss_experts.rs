//! The shipped GPT-OSS rows read with their experts' extras (clamped activation, biases) and
//! priced with the two operations of `extended::moe::expert_extras`; every other shipped MoE row
//! without them.

use fmperf_core::extended::block_operations::block_operations;
use fmperf_core::extended::moe::expert_extras::{BIAS_OP, CLAMP_OP};
use fmperf_core::moe_shape::ExpertExtras;
use fmperf_core::resolve;
use fmperf_core::validate::moe_runs::{MOE_RUNS_JSON, interpret_moe_row};

#[test]
fn gpt_oss_rows_price_the_clamp_and_the_bias_loop_by_hand() {
    let doc: serde_json::Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    let mut oss = 0;
    for row in doc["rows"].as_array().unwrap() {
        let id = row["id"].as_str().unwrap();
        let s = interpret_moe_row(row).unwrap();
        let extras = s.workload.moe.unwrap().extras;
        if !id.contains("gptoss") {
            assert_eq!(extras, ExpertExtras::default(), "{id}");
            continue;
        }
        oss += 1;
        assert_eq!(extras, ExpertExtras { clamped_glu: true, biases: true }, "{id}");
        let sys = resolve::builtin_system(&s.hardware_id).unwrap();
        let (hw, _) = resolve::hardware(sys, s.precision, true, &s.mapping).unwrap();
        let ops = block_operations(&s.workload, &hw, &s.layout, &s.options).unwrap();
        let op = |name: &str| ops.iter().find(|o| o.name == name).unwrap_or_else(|| panic!("{id}: no {name}"));
        // Token copies per rank: micro-batch × 4,096 tokens × top-4 (forced balance, tp 1):
        // 4 · 4,096 · 4 = 65,536 on the EP-64 rows, 1 · 4,096 · 4 = 16,384 on the H100 row (EP 8).
        let copies = if id.contains("h100") { 16_384.0 } else { 65_536.0 };
        // The clamp: 4 passes over the fc1 output, copies · 2 · 2,880 · 2 B (= 754,974,720 B on
        // the EP-64 rows: 3,019,898,880 B forward).
        let w = copies * 2.0 * 2880.0 * 2.0;
        assert_eq!(op(CLAMP_OP).bytes, 4.0 * w, "{id}");
        // The bias loop: 6 · copies · 2,880 · 2 B (2,264,924,160 B on the EP-64 rows).
        assert_eq!(op(BIAS_OP).bytes, 6.0 * copies * 2880.0 * 2.0, "{id}");
        // The rows that recompute `moe_act` rerun the clamp with the activation.
        let reruns = row["parallel"]["recompute"].as_str().is_some_and(|r| r.contains("moe_act"));
        assert_eq!(op(CLAMP_OP).selective_recompute, if reruns { 1.0 } else { 0.0 }, "{id}");
    }
    assert_eq!(oss, 5);
}

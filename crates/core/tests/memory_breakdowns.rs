//! The memory model part by part against published breakdowns (`data/memory-breakdowns.json`,
//! each case with its source): model states by ZeRO stage (ZeRO paper, Table 1 and Figure 1),
//! bytes per parameter with and without Megatron-LM's distributed optimizer, and activations per
//! layer by parallelism and recomputation (Korthikanti et al. 2022, Table 2, on the configurations
//! of their Table 3, through the pipeline's first stage). Each published figure is first checked
//! against its own formula (the configuration is the one the paper used), then fmperf's part is
//! compared with it, less the terms the data file names as absent from fmperf's block and why.

use fmperf_core::SystemParams;
use fmperf_core::catalog::{self, MappingOptions, Precision};
use fmperf_core::extended::{
    ExtendedOptions, GradReduce, Hardware, HardwareChoices, Layout, Recompute, Sharding, Workload,
};
use fmperf_core::extended::{MemoryEstimate, memory_estimate};
use serde_json::Value;

const DATA: &str = include_str!("../data/memory-breakdowns.json");

fn data() -> Value {
    serde_json::from_str(DATA).expect("memory-breakdowns.json parses")
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("`{key}` missing in {v}"))
}

fn int(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("`{key}` missing in {v}"))
}

/// The options of a comparison: no allocator or runtime overheads (the published figures have none).
fn bare(sharding: Sharding, precision: Precision) -> ExtendedOptions {
    let hardware = HardwareChoices { memory_overheads: false, precision, ..HardwareChoices::realistic() };
    ExtendedOptions { sharding, hardware, ..ExtendedOptions::realistic() }
}

fn h200() -> Hardware {
    Hardware::from_params(&SystemParams::h200().with_domain_size(8), true)
}

/// A blocks-only model (no vocabulary) of Llama 3 8B's shape, and its parameters.
fn blocks_only() -> (Workload, f64) {
    let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
    let params = w.layers as f64 * w.block_parameters(true, true);
    (w, params)
}

/// Weights, gradients and optimizer states [GB] (the gathered 16-bit weights apart).
fn states(e: &MemoryEstimate) -> f64 {
    e.part("weights") + e.part("gradients") + e.part("optimizer_states")
}

fn sharding_of(stage: u64) -> Sharding {
    match stage {
        0 => Sharding::Ddp,
        1 => Sharding::Zero1,
        2 => Sharding::Zero2,
        3 => Sharding::Zero3,
        s => panic!("zero_stage {s}"),
    }
}

/// ZeRO's per-device model states (7.5B, K = 12, fp16 gradients) at each stage and data-parallel
/// degree: the printed figure is the paper's formula rounded as printed, and fmperf's weights +
/// gradients + optimizer states, scaled from its model's parameters to 7.5B, equal the formula.
#[test]
fn zero_model_states_by_stage() {
    let d = data();
    let ms = &d["model_states"];
    let psi = num(ms, "parameters_b");
    let b = &ms["bytes"];
    let (wb, gb, ob) = (num(b, "weights"), num(b, "gradients"), num(b, "optimizer_states"));
    let (w, params) = blocks_only();
    let rows = ms["rows"].as_array().unwrap();
    assert!(rows.len() >= 13);
    for row in rows {
        let (dp, stage) = (int(row, "dp"), int(row, "zero_stage"));
        let n = dp as f64;
        // ZeRO §5: Pos keeps 2Ψ + 2Ψ + KΨ/Nd, Pos+g 2Ψ + (2 + K)Ψ/Nd, Pos+g+p (2 + 2 + K)Ψ/Nd.
        let formula = psi
            * match stage {
                0 => wb + gb + ob,
                1 => wb + gb + ob / n,
                2 => wb + (gb + ob) / n,
                _ => (wb + gb + ob) / n,
            };
        let printed = num(row, "published_gb");
        let half_unit = 0.5 * 10f64.powi(-(int(row, "printed_decimals") as i32)) + 1e-9;
        assert!((formula - printed).abs() <= half_unit, "{row}: formula {formula} GB vs printed {printed}");
        // fmperf: 16-bit mixed precision with gradients reduced in the parameter type (2 B).
        let layout = Layout::placed(1, 1, 1, dp, 1, dp, 8);
        let opts = ExtendedOptions { grad_reduce: GradReduce::Param, ..bare(sharding_of(stage), Precision::Bf16) };
        let e = memory_estimate(&w, &h200(), &layout, &opts).unwrap();
        let scaled = states(&e) / (params * 1e-9) * psi;
        assert!((scaled - formula).abs() < 1e-9 * formula, "{row}: fmperf {scaled} GB vs ZeRO {formula} GB");
        // Part by part: weights 2Ψ (ZeRO-3: the FP32 shard, 4Ψ/Nd, which is the master copy).
        let per_param = |part: &str| e.part(part) / (params * 1e-9);
        let expect = match stage {
            0 => [wb, gb, ob],
            1 => [wb, gb, ob / n],
            2 => [wb, gb / n, ob / n],
            _ => [4.0 / n, 4.0 / n, 8.0 / n],
        };
        let got = [per_param("weights"), per_param("gradients"), per_param("optimizer_states")];
        for (g, x) in got.iter().zip(expect) {
            assert!((g - x).abs() < 1e-9 * x, "{row}: parts {got:?} vs {expect:?}");
        }
        // ZeRO-3's gathered blocks are a part of their own, not in ZeRO's model states.
        assert_eq!(e.part("gathered_layers") > 0.0, stage == 3, "{row}");
    }
}

/// Megatron-LM's table of bytes per parameter: fp16, bf16 (FP32 main gradients) and fp32
/// training, without (`ddp`) and with the distributed optimizer (`zero1`) over d = 8 and 64.
#[test]
fn megatron_bytes_per_parameter() {
    let d = data();
    let (w, params) = blocks_only();
    let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    let rows = d["bytes_per_parameter"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        let precision = match row["precision"].as_str().unwrap() {
            "fp16" => Precision::Fp16,
            "bf16" => Precision::Bf16,
            "fp32" => Precision::Fp32,
            p => panic!("precision {p}"),
        };
        let hw = Hardware::from_catalog(h100, precision, true, &MappingOptions::default()).unwrap();
        for dp in [8u64, 64] {
            let layout = Layout::placed(1, 1, 1, dp, 1, dp, 8);
            let per_param =
                |s| states(&memory_estimate(&w, &hw, &layout, &bare(s, precision)).unwrap()) / (params * 1e-9);
            let plain = per_param(Sharding::Ddp);
            assert!((plain - num(row, "plain")).abs() < 1e-9, "{row}: plain {plain}");
            let distributed = num(row, "distributed_fixed") + num(row, "distributed_sharded") / dp as f64;
            let got = per_param(Sharding::Zero1);
            assert!((got - distributed).abs() < 1e-9, "{row}, d = {dp}: distributed {got} vs {distributed}");
        }
    }
}

/// A formula's value per layer in s·b·h bytes: `terms` in units of sbh, sbh/t and a·s²·b/t.
fn per_layer_sbh(terms: &Value, t: f64, as_over_h: f64) -> f64 {
    let get = |k: &str| terms[k].as_f64().unwrap_or(0.0);
    get("sbh") + get("sbh_over_t") / t + get("as2b_over_t") * as_over_h / t
}

/// Korthikanti et al.'s activation memory per layer, on their four models, through the first
/// pipeline stage (p micro-batches of L/p layers: L layers' worth): fmperf's `activations` part
/// equals L times the published per-layer formula less the terms its block does not hold
/// (dropout masks; the s×s scores flash attention does not keep), plus under full recomputation
/// the one block being recomputed at full size. The 22B figure printed in their Figure 1
/// (59.25 GiB) is checked against the formula first.
#[test]
fn korthikanti_activations_per_layer() {
    let d = data();
    let act = &d["activations"];
    let bytes = num(act, "bytes_per_element");
    assert_eq!(bytes, 2.0);
    let hw = h200();
    let mut checked = 0;
    for m in act["models"].as_array().unwrap() {
        let (a, h, l) = (int(m, "heads"), int(m, "hidden"), int(m, "layers"));
        let (t, pp, b, s) = (int(m, "tp"), int(m, "pp"), int(m, "micro_batch"), int(m, "seq"));
        let sbh = (s * b * h) as f64;
        let as_over_h = (a * s) as f64 / h as f64;
        let w = Workload {
            seq_len: s,
            hidden: h,
            heads: a,
            kv_heads: a,
            head_dim: h / a,
            layers: l,
            ffn_hidden: 4 * h,
            gated_mlp: false,
            vocab: None,
            ..Workload::LLAMA3_8B
        };
        let layout = Layout::placed(t, 1, pp, 1, b, int(m, "global_batch"), 8);
        if let Some(p) = m.get("published") {
            let policy = act["policies"].as_array().unwrap().iter().find(|x| x["policy"] == p["policy"]).unwrap();
            let formula_gib =
                per_layer_sbh(&policy["terms"], t as f64, as_over_h) * sbh * l as f64 / (1u64 << 30) as f64;
            assert!((formula_gib - num(p, "gib")).abs() < 0.005, "{}: formula {formula_gib} GiB vs printed", m["name"]);
        }
        for policy in act["policies"].as_array().unwrap() {
            let recompute = match policy["recompute"].as_str().unwrap() {
                "none" => Recompute::None,
                "selective" => Recompute::Selective,
                "full" => Recompute::Full,
                r => panic!("recompute {r}"),
            };
            let sp = policy["sequence_parallel"].as_bool().unwrap();
            let opts = ExtendedOptions { recompute, sequence_parallel: sp, ..bare(Sharding::Zero1, Precision::Bf16) };
            let e = memory_estimate(&w, &hw, &layout, &opts).unwrap();
            let published = per_layer_sbh(&policy["terms"], t as f64, as_over_h);
            let absent = per_layer_sbh(&policy["not_in_fmperf"], t as f64, as_over_h);
            // The block being recomputed, at full size (fmperf's block without recomputation).
            let working = if recompute == Recompute::Full {
                if sp { 32.0 / t as f64 } else { 8.0 + 24.0 / t as f64 }
            } else {
                0.0
            };
            let expect = ((published - absent) * l as f64 + working) * sbh * 1e-9;
            let got = e.part("activations");
            assert!(
                (got - expect).abs() < 1e-9 * expect,
                "{} {}: fmperf {got} GB vs published − absent {expect} GB (stage {})",
                m["name"],
                policy["policy"],
                e.stage
            );
            eprintln!(
                "{:5} {:36} published {:9.2} GB/device, fmperf {:9.2} GB (absent terms {:.2} GB)",
                m["name"].as_str().unwrap(),
                policy["policy"].as_str().unwrap(),
                published * l as f64 * sbh * 1e-9,
                got,
                absent * l as f64 * sbh * 1e-9
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 20);
}

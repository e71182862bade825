//! Mixture-of-Experts launch files (issue 18 §3 with issue 12): a Megatron-LM DeepSeek-V3 script,
//! a Hugging Face Qwen3-30B-A3B config.json (and a DeepSeek-V2-Lite one written inline from its
//! public config), a Megatron-Bridge Mixtral 8x7B YAML are read into the workload's experts,
//! latent attention and MTP blocks, with the file's expert-parallel degrees, and evaluated by
//! extended mode's MoE model; malformed MoE files are errors naming the flag or key.

use fmperf_core::Error;
use fmperf_core::extended::Sharding;
use fmperf_core::extended::moe::{Dispatcher, Load};
use fmperf_core::moe_shape::Router;
use fmperf_launch::{self as launch, Format, LaunchScenario, ModelOnly, Overrides, catalog_model, estimate_text};

const DSV3: &str = include_str!("../../../examples/launch/megatron-deepseek-v3.sh");
const QWEN: &str = include_str!("../../../examples/launch/hf-qwen3-30b-a3b-config.json");
const MIXTRAL: &str = include_str!("../../../examples/launch/bridge-mixtral-8x7b.yaml");

/// deepseek-ai/DeepSeek-V2-Lite config.json (public values; keys that fmperf lists as unused
/// trimmed): no query compression (`q_lora_rank` null), two shared experts, one dense block first.
const DSV2_LITE: &str = r#"{
  "architectures": ["DeepseekV2ForCausalLM"],
  "model_type": "deepseek_v2",
  "hidden_size": 2048,
  "num_hidden_layers": 27,
  "num_attention_heads": 16,
  "num_key_value_heads": 16,
  "intermediate_size": 10944,
  "moe_intermediate_size": 1408,
  "n_routed_experts": 64,
  "n_shared_experts": 2,
  "num_experts_per_tok": 6,
  "first_k_dense_replace": 1,
  "moe_layer_freq": 1,
  "q_lora_rank": null,
  "kv_lora_rank": 512,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "v_head_dim": 128,
  "scoring_func": "softmax",
  "topk_group": 1,
  "n_group": 1,
  "vocab_size": 102400,
  "tie_word_embeddings": false
}"#;

fn seq(n: u64) -> Overrides {
    Overrides { seq_len: Some(n), ..Overrides::default() }
}

#[test]
fn megatron_deepseek_v3_script() {
    let l = launch::parse(DSV3, None).unwrap();
    assert_eq!(l.format, Format::Megatron);
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    let w = &sc.workload;
    let m = w.moe.expect("an MoE workload");
    assert_eq!((m.experts, m.expert_ffn, m.top_k, m.shared_experts, m.shared_ffn), (256, 2048, 8, 1, 2048));
    assert_eq!((m.first_dense, m.moe_every, m.router, m.gated), (3, 1, Router::Sigmoid, true));
    let a = w.mla.expect("latent attention");
    assert_eq!(
        (a.q_lora_rank, a.kv_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim),
        (Some(1536), 512, 128, 64, 128)
    );
    assert_eq!(w.mtp_layers, 1);
    let y = sc.layout;
    assert_eq!((sc.devices, y.tp, y.pp, y.dp, y.ep, y.etp), (1024, 2, 16, 32, 64, 1));
    assert_eq!((sc.options.moe.ep, sc.options.moe.etp), (Some(64), Some(1)));
    assert_eq!(sc.options.moe.dispatcher, Dispatcher::AllToAll);
    assert_eq!(catalog_model(w), Some("deepseek-v3"));
    // MoE flags without an effect are listed with why (grouped GEMMs and permute fusion change
    // the host calls: read, see launch_moe_host.rs).
    for (key, why) in [
        ("--moe-router-num-groups", "group-limited routing"),
        ("--moe-aux-loss-coeff", "hyper-parameter"),
        ("--mtp-loss-scaling-factor", "hyper-parameter"),
    ] {
        let u = l.unused.iter().find(|u| u.key == key).unwrap_or_else(|| panic!("{key} not listed"));
        assert!(u.why.contains(why), "{key}: {}", u.why);
    }
    // The estimate is extended mode's MoE evaluation of exactly this layout.
    let (_, e) = estimate_text(DSV3, None, &Overrides::default()).unwrap();
    let b = e.evaluation.moe.expect("an MoE breakdown");
    assert_eq!((b.experts.ep, b.experts.etp, b.experts.edp), (64, 1, 1));
    assert!(b.times.a2a_s > 0.0 && b.times.experts_s > 0.0);
    // Parameters as the catalog's DeepSeek-V3 (671 B total, 37 B active).
    let total = b.parameters.total * 1e-9;
    assert!((total - 671.0).abs() < 3.0, "{total}");
    assert!((b.parameters.active * 1e-9 - 37.5).abs() < 1.0, "{}", b.parameters.active);
    let j = e.to_json(&l);
    assert_eq!((j["config"]["ep"].as_u64(), j["moe"]["experts"].as_u64()), (Some(64), Some(256)));
    assert_eq!(j["moe"]["breakdown"]["experts"]["ep"].as_u64(), Some(64));
}

#[test]
fn hf_qwen3_and_deepseek_configs() {
    let l = launch::parse(QWEN, Some("config.json")).unwrap();
    let m = ModelOnly::from_launch(&l, &seq(4096), 1).unwrap();
    let w = &m.workload;
    let x = w.moe.unwrap();
    assert_eq!((w.layers, w.hidden, w.heads, w.kv_heads, w.head_dim), (48, 2048, 32, 4, 128));
    assert_eq!(
        (x.experts, x.expert_ffn, x.top_k, x.shared_experts, x.first_dense, x.moe_every),
        (128, 768, 8, 0, 0, 1)
    );
    assert_eq!(catalog_model(w), Some("qwen3-30b-a3b"));
    assert!(w.mla.is_none() && w.mtp_layers == 0);
    // Still a model file: its layout comes from a search.
    let e = LaunchScenario::from_launch(&l, &seq(4096)).unwrap_err();
    assert!(e.to_string().contains("fmperf search --from"), "{e}");

    let l = launch::parse(DSV2_LITE, Some("config.json")).unwrap();
    let w = ModelOnly::from_launch(&l, &seq(4096), 1).unwrap().workload;
    let x = w.moe.unwrap();
    assert_eq!(
        (x.experts, x.expert_ffn, x.top_k, x.shared_experts, x.shared_ffn, x.first_dense),
        (64, 1408, 6, 2, 1408, 1)
    );
    let a = w.mla.unwrap();
    assert_eq!((a.q_lora_rank, a.kv_lora_rank), (None, 512));
    assert_eq!(catalog_model(&w), Some("deepseek-v2-lite"));
    assert!(l.unused.iter().any(|u| u.key == "n_group" && u.why.contains("group-limited")));
}

#[test]
fn bridge_mixtral_yaml() {
    let l = launch::parse(MIXTRAL, Some("mixtral.yaml")).unwrap();
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    let m = sc.workload.moe.unwrap();
    assert_eq!((m.experts, m.top_k, m.expert_ffn, m.shared_experts), (8, 2, 14336, 0));
    let y = sc.layout;
    assert_eq!((sc.devices, y.tp, y.pp, y.dp, y.ep, y.etp), (32, 1, 4, 8, 8, 1));
    assert_eq!((sc.options.interleave, sc.options.sharding), (8, Sharding::Zero1));
    assert_eq!(catalog_model(&sc.workload), Some("mixtral-8x7b"));
    let (_, e) = estimate_text(MIXTRAL, Some("mixtral.yaml"), &Overrides::default()).unwrap();
    assert_eq!(e.evaluation.moe.unwrap().experts.ep, 8);
}

#[test]
fn megatron_moe_switches_and_defaults() {
    // Capacity factor, the flex dispatcher, every 2nd block MoE, etp defaulting to tp.
    let t = DSV3
        .replace(
            "--moe-token-dispatcher-type alltoall",
            "--moe-token-dispatcher-type flex --moe-expert-capacity-factor 1.0",
        )
        .replace("--moe-layer-freq \"([0]*3+[1]*58)\"", "--moe-layer-freq 2")
        .replace("--expert-tensor-parallel-size 1", "")
        .replace("EP=64", "EP=32");
    let l = launch::parse(&t, None).unwrap();
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    let m = sc.workload.moe.unwrap();
    assert_eq!((m.first_dense, m.moe_every, m.moe_blocks(61)), (0, 2, 30));
    assert_eq!(sc.options.moe.dispatcher, Dispatcher::Hierarchical { max_domains: None });
    assert!(matches!(sc.options.moe.load, Load::Capacity { factor, .. } if factor == 1.0));
    assert_eq!((sc.layout.ep, sc.layout.etp), (32, 2), "Megatron's etp defaults to tp");
    assert!(sc.assumptions.iter().any(|a| a.contains("--moe-layer-freq = 2")), "{:?}", sc.assumptions);
    let (_, e) = estimate_text(&t, None, &Overrides::default()).unwrap();
    // C = 1 under γ = 1.1 drops (0.1)²/(4·0.1) = 2.5 % of the assignments.
    assert!((e.evaluation.moe.unwrap().dropped_fraction - 0.025).abs() < 1e-12);
    // Latent-attention widths without --multi-latent-attention change nothing and say so.
    let l = launch::parse(&DSV3.replace("--multi-latent-attention", ""), None).unwrap();
    assert!(l.unused.iter().any(|u| u.key == "--kv-lora-rank" && u.why.contains("latent attention")));
    assert!(LaunchScenario::from_launch(&l, &Overrides::default()).unwrap().workload.mla.is_none());
}

fn field_of(text: &str, name: &str) -> (Option<String>, String) {
    let e = launch::parse(text, Some(name)).and_then(|l| LaunchScenario::from_launch(&l, &seq(4096))).unwrap_err();
    (e.field().map(str::to_string), e.to_string())
}

#[test]
fn malformed_moe_files_name_the_flag_or_key() {
    // Megatron: a layer list of the wrong length, one that is no first-k-dense / every-n-th
    // pattern, a top-k above the experts, an unknown dispatcher, ep not dividing the experts,
    // ep·etp not fitting tp·dp.
    let (f, e) = field_of(&DSV3.replace("[1]*58", "[1]*57"), "a.sh");
    assert_eq!(f.as_deref(), Some("--moe-layer-freq"));
    assert!(e.contains("lists 60 blocks, the model has 61"), "{e}");
    let (f, _) = field_of(&DSV3.replace("([0]*3+[1]*58)", "([1]*3+[0,1]*29)"), "a.sh");
    assert_eq!(f.as_deref(), Some("--moe-layer-freq"));
    let (f, e) = field_of(&DSV3.replace("--moe-router-topk 8", "--moe-router-topk 300"), "a.sh");
    assert_eq!(f.as_deref(), Some("--moe-router-topk"));
    assert!(e.contains("256"), "{e}");
    let (f, _) = field_of(&DSV3.replace("dispatcher-type alltoall", "dispatcher-type ring"), "a.sh");
    assert_eq!(f.as_deref(), Some("--moe-token-dispatcher-type"));
    let (f, e) = field_of(&DSV3.replace("EP=64", "EP=48"), "a.sh");
    assert_eq!(f.as_deref(), Some("--expert-model-parallel-size"));
    assert!(e.contains("must divide the routed experts 256"), "{e}");
    let (f, e) = field_of(&DSV3.replace("EP=64", "EP=128"), "a.sh");
    assert_eq!(f.as_deref(), Some("--expert-model-parallel-size"));
    assert!(e.contains("must divide the ranks of one pipeline stage"), "{e}");
    let (f, _) =
        field_of(&DSV3.replace("--moe-router-score-function sigmoid", "--moe-router-score-function tanh"), "a.sh");
    assert_eq!(f.as_deref(), Some("--moe-router-score-function"));
    // Bridge YAML: ep not dividing the experts, a bad layer frequency.
    let (f, _) = field_of(&MIXTRAL.replace("expert_model_parallel_size: 8", "expert_model_parallel_size: 3"), "m.yaml");
    assert_eq!(f.as_deref(), Some("model.expert_model_parallel_size"));
    let (f, _) =
        field_of(&MIXTRAL.replace("moe_router_topk: 2", "moe_router_topk: 2\n  moe_layer_freq: \"[1,x]\""), "m.yaml");
    assert_eq!(f.as_deref(), Some("model.moe_layer_freq"));
    // HF: top-k missing, experts of the wrong type.
    let e = launch::parse(&QWEN.replace("\"num_experts_per_tok\": 8,", ""), Some("c.json"))
        .and_then(|l| ModelOnly::from_launch(&l, &seq(4096), 1))
        .unwrap_err();
    assert!(matches!(&e, Error::MissingField { field } if field == "num_experts_per_tok"), "{e}");
    let e =
        launch::parse(&QWEN.replace("\"num_experts\": 128", "\"num_experts\": \"many\""), Some("c.json")).unwrap_err();
    assert_eq!(e.field(), Some("num_experts"));
}

#[test]
fn deleting_any_line_never_panics() {
    for (text, name) in [(DSV3, "a.sh"), (MIXTRAL, "b.yaml"), (QWEN, "c.json")] {
        let lines: Vec<&str> = text.lines().collect();
        for i in 0..lines.len() {
            let mut t = lines.clone();
            t.remove(i);
            let t = t.join("\n");
            let _ = estimate_text(&t, Some(name), &seq(4096));
            if let Ok(l) = launch::parse(&t, Some(name)) {
                let _ = ModelOnly::from_launch(&l, &seq(4096), 1);
            }
        }
    }
}

//! Launch files set the MoE layer's host flags and say where a stack switch depends on what the
//! file cannot state (issue 32): Megatron-LM command lines with and without `--moe-grouped-gemm`,
//! fusions set off, balancing losses and CUDA-graph modules; NeMo / Megatron-Bridge YAML keys
//! (items of a list too); Megatron-LM functional tests' `MODEL_ARGS`; torchtitan TOML on B200.

use fmperf_core::extended::moe::host_flags::{Balancing, GraphScope};
use fmperf_launch::{self as launch, Format, LaunchScenario, Overrides, estimate_text};

const DSV3: &str = include_str!("../../../examples/launch/megatron-deepseek-v3.sh");
const MIXTRAL: &str = include_str!("../../../examples/launch/bridge-mixtral-8x7b.yaml");
const TITAN: &str = include_str!("../../../examples/launch/torchtitan-llama3-8b.toml");

fn scenario(text: &str, name: Option<&str>) -> LaunchScenario {
    let l = launch::parse(text, name).unwrap();
    LaunchScenario::from_launch(&l, &Overrides::default()).unwrap()
}

fn step_s(text: &str, name: Option<&str>) -> f64 {
    estimate_text(text, name, &Overrides::default()).unwrap().1.evaluation.totals.t
}

fn said(sc: &LaunchScenario, words: &str) -> bool {
    sc.assumptions.iter().any(|n| n.contains(words))
}

#[test]
fn megatron_command_with_and_without_grouped_gemm() {
    // The example as written: grouped GEMMs, permute fusion, seq_aux_loss.
    let sc = scenario(DSV3, None);
    let h = sc.options.moe.host;
    assert!(!h.sequential_experts && h.permute_fusion && !h.router_fusion);
    assert_eq!((h.balancing, h.graphs), (Balancing::SeqAuxLoss, GraphScope::default()));
    assert!(said(&sc, "--moe-grouped-gemm true: the local experts as one grouped GEMM"), "{:?}", sc.assumptions);
    // The flags are read, so no longer listed as without effect.
    let l = launch::parse(DSV3, None).unwrap();
    for key in ["--moe-grouped-gemm", "--moe-permute-fusion", "--moe-router-load-balancing-type"] {
        assert!(!l.unused.iter().any(|u| u.key == key), "{key} listed as unused");
    }
    // Without --moe-grouped-gemm Megatron-Core runs SequentialMLP: the same GEMMs, one host call
    // per local expert (256 experts / EP 64 = 4 per rank), so the step can only get longer; here
    // the blocks are device-bound (46.31 s either way), the small model below is not.
    let seq = DSV3.replace("    --moe-grouped-gemm\n", "");
    let sc = scenario(&seq, None);
    assert!(sc.options.moe.host.sequential_experts);
    assert!(said(&sc, "no --moe-grouped-gemm, Megatron's default: the local experts one by one"));
    assert!(step_s(&seq, None) >= step_s(DSV3, None));
    // Fusions set off are off; a loss named twice the same way is one loss.
    let off = DSV3
        .replace("--moe-permute-fusion", "--moe-permute-fusion false --moe-router-fusion")
        .replace("seq_aux_loss", "sinkhorn sinkhorn");
    let h = scenario(&off, None).options.moe.host;
    assert!(!h.permute_fusion && h.router_fusion && h.balancing == Balancing::Sinkhorn);
}

#[test]
fn megatron_cuda_graph_modules() {
    let with =
        |flags: &str| DSV3.replace("    --moe-permute-fusion\n", &format!("    --moe-permute-fusion\n    {flags}\n"));
    let all = GraphScope { attn: true, moe_router: true, moe_preprocess: true };
    let te = with("--cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router moe_preprocess");
    let sc = scenario(&te, None);
    assert_eq!(sc.options.moe.host.graphs, all);
    assert!(said(&sc, "CUDA graphs over attn+moe_router+moe_preprocess"), "{:?}", sc.assumptions);
    // The deprecated spellings: --external-cuda-graph is Transformer Engine's, --cuda-graph-scope
    // the older list.
    let old = with("--external-cuda-graph --cuda-graph-scope attn");
    assert_eq!(scenario(&old, None).options.moe.host.graphs, GraphScope { attn: true, ..GraphScope::default() });
    // Unpriced captures are errors naming the flag: the whole layer (no modules), a whole MoE
    // layer, the whole iteration.
    for (flags, field) in [
        ("--enable-cuda-graph", "--enable-cuda-graph"),
        ("--cuda-graph-impl local --cuda-graph-modules attn moe", "--cuda-graph-modules"),
        ("--cuda-graph-impl full_iteration", "--cuda-graph-impl"),
    ] {
        let l = launch::parse(&with(flags), None).unwrap();
        let e = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap_err();
        assert_eq!(e.field(), Some(field), "{flags}: {e}");
        assert!(e.to_string().contains("does not price"), "{flags}: {e}");
    }
    // Modules without an implementation do nothing, and the note says so.
    let sc = scenario(&with("--cuda-graph-modules attn"), None);
    assert_eq!(sc.options.moe.host.graphs, GraphScope::default());
    assert!(said(&sc, "no effect without a CUDA-graph implementation"));
}

#[test]
fn megatron_deepspeed_moe_keeps_the_grouped_default() {
    // Megatron-DeepSpeed's MoE layer is DeepSpeed's, not Megatron-Core's SequentialMLP: an absent
    // --moe-grouped-gemm is not read as Megatron-Core's default there.
    let text = "deepspeed pretrain_gpt.py --deepspeed --num-layers 4 --hidden-size 512 --num-attention-heads 8 \
                --seq-length 1024 --micro-batch-size 1 --global-batch-size 8 --num-experts 8 --bf16";
    let l = launch::parse(text, None).unwrap();
    assert_eq!(l.settings.moe.megatron_args.copied(), None);
    let plain = text.replace("--deepspeed ", "");
    assert_eq!(launch::parse(&plain, None).unwrap().settings.moe.megatron_args.copied(), Some(true));
}

#[test]
fn nemo_and_bridge_yaml_keys() {
    // The example states every key: grouped GEMMs, permute fusion, aux_loss.
    let sc = scenario(MIXTRAL, Some("mixtral.yaml"));
    let h = sc.options.moe.host;
    assert!(!h.sequential_experts && h.permute_fusion && h.balancing == Balancing::AuxLoss);
    // Without moe_grouped_gemm a YAML may inherit it from a recipe it does not show: grouped GEMMs
    // stay priced and an assumption says how to price SequentialMLP.
    let silent = MIXTRAL.replace("  moe_grouped_gemm: true\n", "");
    let sc = scenario(&silent, Some("mixtral.yaml"));
    assert!(!sc.options.moe.host.sequential_experts);
    assert!(said(&sc, "set moe_grouped_gemm: false"), "{:?}", sc.assumptions);
    let sc = scenario(&MIXTRAL.replace("moe_grouped_gemm: true", "moe_grouped_gemm: false"), Some("m.yaml"));
    assert!(sc.options.moe.host.sequential_experts);
    // Router fusion and CUDA graphs, the modules as a block list or a flow list.
    let keys = "  moe_router_fusion: true\n  cuda_graph_impl: transformer_engine\n  cuda_graph_scope:\n    - attn\n    - moe_router\n";
    let block = MIXTRAL.replace("  moe_permute_fusion: true\n", &format!("  moe_permute_fusion: false\n{keys}"));
    let h = scenario(&block, Some("m.yaml")).options.moe.host;
    assert!(!h.permute_fusion && h.router_fusion);
    assert_eq!(h.graphs, GraphScope { attn: true, moe_router: true, moe_preprocess: false });
    let flow = MIXTRAL.replace(
        "  moe_permute_fusion: true\n",
        "  moe_permute_fusion: true\n  enable_cuda_graph: true\n  cuda_graph_scope: [moe_router, moe_preprocess]\n",
    );
    assert_eq!(
        scenario(&flow, Some("m.yaml")).options.moe.host.graphs,
        GraphScope { attn: false, moe_router: true, moe_preprocess: true }
    );
    // A loss fmperf does not price names the key.
    let l = launch::parse(&MIXTRAL.replace("aux_loss", "quantile_balancing"), Some("m.yaml")).unwrap();
    let e = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap_err();
    assert_eq!(e.field(), Some("model.moe_router_load_balancing_type"), "{e}");
}

/// A Megatron-LM functional test's `model_config.yaml` (the form of
/// `tests/functional_tests/test_cases/moe/*/model_config.yaml`): `MODEL_ARGS` are the command's
/// flags as keys.
const FUNCTIONAL: &str = "ENV_VARS:\n  CUDA_DEVICE_MAX_CONNECTIONS: 1\nMODEL_ARGS:\n  --num-layers: 4\n  \
                          --hidden-size: 512\n  --num-attention-heads: 8\n  --seq-length: 1024\n  \
                          --max-position-embeddings: 1024\n  --micro-batch-size: 4\n  --global-batch-size: 32\n  \
                          --tensor-model-parallel-size: 2\n  --expert-model-parallel-size: 2\n  --num-experts: 8\n  \
                          --moe-router-topk: 2\n  --bf16: true\n  --no-gradient-accumulation-fusion: true\n\
                          TEST_TYPE: regular\n";

#[test]
fn functional_test_model_args() {
    let l = launch::parse(
        &format!("# fmperf: system=nvidia_h100_sxm5_80gb gpus=8\n{FUNCTIONAL}"),
        Some("model_config.yaml"),
    )
    .unwrap();
    assert_eq!(l.format, Format::NemoYaml);
    assert_eq!((l.settings.tp.copied(), l.settings.moe.ep.copied()), (Some(2), Some(2)));
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    // Megatron-LM's arguments without --moe-grouped-gemm: SequentialMLP.
    assert!(sc.options.moe.host.sequential_experts && !sc.options.grad_accumulation_fusion);
    let grouped = FUNCTIONAL.replace("  --bf16: true\n", "  --bf16: true\n  --moe-grouped-gemm: true\n");
    let with = |t: &str| format!("# fmperf: system=nvidia_h100_sxm5_80gb gpus=8\n{t}");
    let l = launch::parse(&with(&grouped), Some("m.yaml")).unwrap();
    assert!(!LaunchScenario::from_launch(&l, &Overrides::default()).unwrap().options.moe.host.sequential_experts);
    // A 512-wide model's blocks are bound by the host's calls: 4 local experts one by one (8
    // experts / EP 2) issue more of them than one grouped GEMM, and the step is longer.
    assert!(step_s(&with(FUNCTIONAL), Some("m.yaml")) > step_s(&with(&grouped), Some("m.yaml")));
}

#[test]
fn torchtitan_version_dependent_memory_switches_are_assumed_not_guessed() {
    // FSDP over 8 devices on H100: nothing depends on torchtitan's version.
    let sc = scenario(TITAN, Some("t.toml"));
    assert!(sc.options.op_saves_attention && !sc.options.fp32_params_autocast);
    assert!(!said(&sc, "op_saves_attention") && !said(&sc, "fp32_params_autocast"));
    // Per-op SAC on a B200: the default kept, the older versions named with the switch.
    assert!(TITAN.contains("selective_ac_option = \"op\""));
    let op = TITAN.replace("nvidia_h100_sxm5_80gb", "nvidia_b200_hgx");
    let sc = scenario(&op, Some("t.toml"));
    assert!(sc.options.op_saves_attention);
    assert!(said(&sc, "--ext op_saves_attention=off"), "{:?}", sc.assumptions);
    // One device, no FSDP: torch.autocast over FP32 weights in some versions, said not applied.
    let one = TITAN.replace("gpus=8", "gpus=1");
    let sc = scenario(&one, Some("t.toml"));
    assert!(!sc.options.fp32_params_autocast);
    assert!(said(&sc, "--ext fp32_params_autocast=on"), "{:?}", sc.assumptions);
}

#[test]
fn a_dense_model_lists_its_moe_and_cuda_graph_flags() {
    let l = launch::parse(
        "python pretrain_gpt.py --num-layers 2 --cuda-graph-impl local --cuda-graph-modules attn --moe-permute-fusion",
        None,
    )
    .unwrap();
    let why = |k: &str| l.unused.iter().find(|u| u.key == k).map(|u| u.why.clone()).unwrap_or_default();
    // CUDA graphs change a dense run too, but fmperf prices them only in an MoE layer's calls.
    assert!(why("--cuda-graph-impl").contains("not modelled for a dense model"), "{:?}", l.unused);
    assert!(why("--cuda-graph-modules").contains("not modelled for a dense model"));
    assert!(why("--moe-permute-fusion").contains("no routed experts"));
}

#[test]
fn megatron_shared_expert_overlap() {
    // `--moe-shared-expert-overlap` (Megatron-Core's default off): read, not listed as unused.
    let with =
        |flags: &str| DSV3.replace("    --moe-permute-fusion\n", &format!("    --moe-permute-fusion\n    {flags}\n"));
    assert!(!scenario(DSV3, None).options.moe.shared_overlap);
    let on = with("--moe-shared-expert-overlap");
    let sc = scenario(&on, None);
    assert!(sc.options.moe.shared_overlap);
    assert!(
        said(&sc, "--moe-shared-expert-overlap: the shared experts' GEMMs run on a side stream"),
        "{:?}",
        sc.assumptions
    );
    assert!(!launch::parse(&on, None).unwrap().unused.iter().any(|u| u.key == "--moe-shared-expert-overlap"));
    // Megatron-Core refuses it with the all-gather dispatcher and with the EP all-to-all overlap:
    // errors naming the flag.
    for extra in ["--moe-token-dispatcher-type allgather", "--overlap-moe-expert-parallel-comm"] {
        let l = launch::parse(&with(&format!("--moe-shared-expert-overlap {extra}")), None).unwrap();
        let e = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains("--moe-shared-expert-overlap"), "{extra}: {e}");
    }
}

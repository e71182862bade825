//! Launch files as the input (issue 18 §3): each shipped example is read, turned into its scenario
//! and estimated; malformed files are errors that name the flag or key; no input panics.

use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{Fp8Recipe, Recompute, Sharding};
use fmperf_launch::{self as launch, Format, LaunchScenario, Overrides, estimate_text};

const MEGATRON: &str = include_str!("../../../examples/launch/megatron-llama3-70b.sh");
const TORCHTITAN: &str = include_str!("../../../examples/launch/torchtitan-llama3-8b.toml");
const NEMO: &str = include_str!("../../../examples/launch/nemo-llama3-8b.yaml");
const HF: &str = include_str!("../../../examples/launch/hf-llama3-8b-config.json");
const BLOOM: &str = include_str!("../../../examples/launch/bloom-176b-megatron-deepspeed.slurm");

fn scenario(text: &str, name: &str) -> LaunchScenario {
    let l = launch::parse(text, Some(name)).unwrap();
    LaunchScenario::from_launch(&l, &Overrides::default()).unwrap()
}

#[test]
fn megatron_llama3_70b_script() {
    let l = launch::parse(MEGATRON, None).unwrap();
    assert_eq!(l.format, Format::Megatron);
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    let (w, y, o) = (&sc.workload, &sc.layout, &sc.options);
    assert_eq!((w.layers, w.hidden, w.ffn_hidden, w.heads, w.kv_heads, w.seq_len), (80, 8192, 28672, 64, 8, 8192));
    assert!(w.gated_mlp);
    assert_eq!(w.vocab, Some(129_024), "128256 padded to a multiple of 128·tp");
    assert_eq!((sc.devices, y.tp, y.pp, y.cp, y.dp, y.mbs, y.global_batch), (64, 8, 4, 1, 2, 1, 128));
    assert_eq!((o.interleave, o.recompute, o.sharding), (4, Recompute::Selective, Sharding::Zero1));
    assert!(o.sequence_parallel);
    assert_eq!(o.hardware.precision, Precision::Bf16);
    assert_eq!(sc.system.as_deref(), Some("nvidia_h100_sxm5_80gb"));
    // Logging, checkpoint and data flags are listed with why, none silently dropped.
    for key in ["--save-interval", "--data-path", "--log-interval", "--lr", "--master_port", "--time"] {
        let u = l.unused.iter().find(|u| u.key == key).unwrap_or_else(|| panic!("{key} not listed"));
        assert!(u.why.contains("does not affect"), "{key}: {}", u.why);
    }
    assert!(l.unused.iter().all(|u| !u.why.is_empty()));
}

#[test]
fn torchtitan_nemo_and_hf_examples() {
    let t = scenario(TORCHTITAN, "torchtitan-llama3-8b.toml");
    assert_eq!((t.workload.ffn_hidden, t.workload.vocab, t.devices), (14336, Some(128_256), 8));
    assert_eq!((t.layout.dp, t.layout.mbs, t.layout.global_batch), (8, 1, 8));
    // `selective_ac_option = "op"`: torchtitan's operator-level policy.
    assert_eq!((t.options.sharding, t.options.recompute), (Sharding::Zero3, Recompute::Op));

    let n = scenario(NEMO, "nemo-llama3-8b.yaml");
    assert_eq!((n.devices, n.layout.tp, n.layout.dp, n.layout.global_batch), (16, 2, 8, 128));
    // `optim.name: distributed_fused_adam`: Apex's ZeRO-2 (optimizer states and gradients sharded).
    assert_eq!((n.options.sharding, n.options.recompute), (Sharding::Zero2, Recompute::Selective));
    assert_eq!(n.workload.seq_len, 8192);

    let h = launch::parse(HF, Some("config.json")).unwrap();
    let m = launch::ModelOnly::from_launch(&h, &Overrides { seq_len: Some(4096), ..Overrides::default() }, 1).unwrap();
    assert_eq!((m.workload.layers, m.workload.kv_heads, m.workload.vocab), (32, 8, Some(128_256)));
    let e = LaunchScenario::from_launch(&h, &Overrides::default()).unwrap_err();
    assert!(e.to_string().contains("fmperf search --from"), "{e}");
}

#[test]
fn estimates_have_the_contract_fields() {
    for (text, name) in [(MEGATRON, "a.sh"), (TORCHTITAN, "b.toml"), (NEMO, "c.yaml")] {
        let (l, e) = estimate_text(text, Some(name), &Overrides::default()).unwrap();
        let j = e.to_json(&l);
        for k in ["tp", "pp", "dp", "cp", "mbs", "vpp", "recompute", "sharding", "precision"] {
            assert!(!j["config"][k].is_null(), "{name}: config.{k}");
        }
        for k in ["kind", "predicted_gb", "capacity_gb", "fits"] {
            assert!(!j["memory"][k].is_null(), "{name}: memory.{k}");
        }
        let t = j["time_per_step_s"].as_f64().unwrap();
        let tok = j["tokens_per_s"].as_f64().unwrap();
        let mfu = j["mfu"].as_f64().unwrap();
        assert!(t > 0.0 && tok > 0.0 && mfu > 0.05 && mfu < 1.0, "{name}: {t} {tok} {mfu}");
        let g = j["config"]["global_batch"].as_f64().unwrap();
        let seq = j["model"]["seq_len"].as_f64().unwrap();
        assert!((tok - g * seq / t).abs() < 1e-6 * tok, "{name}: tokens/s = G·seq/t");
        assert!(j["unused"].as_array().is_some_and(|u| !u.is_empty() && u.iter().all(|x| x["why"].is_string())));
        assert_ne!(j["memory"]["fits"], "no", "{name}: the example runs are not predicted to fail");
        // The three figures are the memory model's own, as `fmperf validate` reports them:
        // allocated < reserved (the allocator's cache) < device (CUDA context, NCCL buffers).
        let m = &e.evaluation.memory_estimate;
        let figure = |k: &str| j["memory"][k].as_f64().unwrap();
        assert_eq!((figure("allocated_gb"), figure("reserved_gb")), (m.allocated_gb, m.reserved_gb), "{name}");
        assert!(
            figure("allocated_gb") < figure("reserved_gb") && figure("reserved_gb") < figure("device_gb"),
            "{name}"
        );
    }
}

#[test]
fn overrides_and_system_errors() {
    let o = Overrides { gpus: Some(128), global_batch: Some(256), ..Overrides::default() };
    let (_, e) = estimate_text(MEGATRON, None, &o).unwrap();
    assert_eq!((e.layout.dp, e.layout.global_batch), (4, 256));
    let no_system = MEGATRON.replace("# fmperf: system=nvidia_h100_sxm5_80gb", "");
    let err = estimate_text(&no_system, None, &Overrides::default()).unwrap_err();
    assert_eq!(err.field(), Some("--system"));
    let o = Overrides { system: Some("nvidia_h999".into()), ..Overrides::default() };
    assert!(estimate_text(MEGATRON, None, &o).is_err());
}

fn field_of(text: &str, name: &str) -> Option<String> {
    let e = launch::parse(text, Some(name))
        .and_then(|l| LaunchScenario::from_launch(&l, &Overrides::default()))
        .unwrap_err();
    e.field().map(str::to_string)
}

#[test]
fn malformed_files_name_the_flag_or_key() {
    // Megatron: a value that is not a number, a variable the script never sets, a bad choice.
    let bad = MEGATRON.replace("--num-layers 80", "--num-layers eighty");
    assert_eq!(field_of(&bad, "a.sh").as_deref(), Some("--num-layers"));
    let bad = MEGATRON.replace("TP=8", "");
    let e = launch::parse(&bad, None).unwrap_err().to_string();
    assert!(e.contains("--tensor-model-parallel-size") && e.contains("$TP"), "{e}");
    let bad = MEGATRON.replace("--recompute-activations", "--recompute-granularity most");
    assert_eq!(field_of(&bad, "a.sh").as_deref(), Some("--recompute-granularity"));
    let bad = MEGATRON.replace("GBS=128", "GBS=127");
    assert_eq!(field_of(&bad, "a.sh").as_deref(), Some("--global-batch-size"));
    // torchtitan: broken TOML, an unknown flavour, a degree that is not a number.
    assert!(matches!(launch::parse("[model\nflavor = \"8B\"", Some("t.toml")).unwrap_err(), Error::Parse { .. }));
    let bad = TORCHTITAN.replace("flavor = \"8B\"", "flavor = \"7B\"");
    assert_eq!(field_of(&bad, "t.toml").as_deref(), Some("model.flavor"));
    let bad = TORCHTITAN.replace("tensor_parallel_degree = 1", "tensor_parallel_degree = \"two\"");
    assert_eq!(field_of(&bad, "t.toml").as_deref(), Some("parallelism.tensor_parallel_degree"));
    // NeMo YAML: bad indentation, a bad precision.
    let bad = NEMO.replace("  num_layers: 32", " num_layers: 32");
    let e = launch::parse(&bad, Some("n.yaml")).unwrap_err().to_string();
    assert!(e.contains("YAML line"), "{e}");
    let bad = NEMO.replace("precision: bf16-mixed", "precision: half");
    assert_eq!(field_of(&bad, "n.yaml").as_deref(), Some("trainer.precision"));
    // HF: truncated JSON, a key with the wrong type.
    assert!(matches!(launch::parse(&HF[..HF.len() / 2], Some("c.json")).unwrap_err(), Error::Parse { .. }));
    let bad = HF.replace("\"num_hidden_layers\": 32", "\"num_hidden_layers\": -3");
    assert_eq!(field_of(&bad, "c.json").as_deref(), Some("num_hidden_layers"));
}

/// A small deterministic generator of edits.
fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

#[test]
fn mutated_files_never_panic() {
    let pieces = ["\\", "\"", "'", "$(", "${", "((", "[", "]", "{", "=", ":", "-", "#", "\n", " ", "0", "-1", "\t"];
    let mut state = 7u64;
    for (text, name) in [(MEGATRON, "a.sh"), (TORCHTITAN, "b.toml"), (NEMO, "c.yaml"), (HF, "d.json")] {
        for _ in 0..150 {
            let mut t: Vec<char> = text.chars().collect();
            for _ in 0..1 + lcg(&mut state) % 4 {
                let at = (lcg(&mut state) as usize) % t.len().max(1);
                let p = pieces[(lcg(&mut state) as usize) % pieces.len()];
                if lcg(&mut state) % 2 == 0 {
                    t.splice(at..at, p.chars());
                } else {
                    let end = (at + 1 + lcg(&mut state) as usize % 12).min(t.len());
                    t.drain(at..end);
                }
            }
            let mutated: String = t.into_iter().collect();
            let _ = estimate_text(&mutated, Some(name), &Overrides::default());
            let _ = launch::parse(&mutated, None);
        }
    }
}

#[test]
fn fp8_primary_weights_from_the_flag_and_megatron_bridge_recipes() {
    // Megatron-LM: `--fp8-param-gather` with FP8 linear layers; without it, plain Transformer Engine.
    let with = MEGATRON.replace("--bf16", "--bf16 --fp8-format hybrid --fp8-param-gather");
    assert_ne!(with, MEGATRON, "the example sets --bf16");
    let sc = scenario(&with, "run.sh");
    assert_eq!(
        (sc.options.hardware.precision, sc.options.fp8_recipe),
        (Precision::Fp8, Fp8Recipe::TransformerEngineFp8Weights)
    );
    let l = launch::parse(&with, Some("run.sh")).unwrap();
    assert!(l.unused.iter().all(|u| u.key != "--fp8-param-gather"), "the flag is read, not listed as unused");
    let plain = scenario(&MEGATRON.replace("--bf16", "--bf16 --fp8-format hybrid"), "run.sh");
    assert_eq!(plain.options.fp8_recipe, Fp8Recipe::TransformerEngine);
    // Without FP8 the flag changes nothing.
    let bf16 = scenario(&MEGATRON.replace("--bf16", "--bf16 --fp8-param-gather"), "run.sh");
    assert_eq!(
        (bf16.options.hardware.precision, bf16.options.fp8_recipe),
        (Precision::Bf16, Fp8Recipe::TransformerEngine)
    );
    // NeMo / Megatron-Bridge YAML: an FP8 mixed-precision recipe name turns FP8 weights on, unless
    // the file sets fp8_param_gather itself.
    let recipe = NEMO.replace("precision: bf16-mixed", "precision: bf16_with_fp8_current_scaling_mixed");
    assert_ne!(recipe, NEMO);
    assert_eq!(scenario(&recipe, "n.yaml").options.fp8_recipe, Fp8Recipe::TransformerEngineFp8Weights);
    let off = recipe.replace("  fp8: false", "  fp8: false\n  fp8_param_gather: false");
    assert_ne!(off, recipe);
    assert_eq!(scenario(&off, "n.yaml").options.fp8_recipe, Fp8Recipe::TransformerEngine);
    // A value that is not a boolean names the flag.
    let bad = MEGATRON.replace("--bf16", "--bf16 --fp8-param-gather=maybe");
    let e = launch::parse(&bad, Some("run.sh")).unwrap_err().to_string();
    assert!(e.contains("--fp8-param-gather"), "{e}");
}

#[test]
fn torchtitan_compile_and_float8_follow_the_file() {
    use fmperf_core::extended::Fusion;
    let read = |text: &str| {
        let sc = scenario(text, "t.toml");
        (sc.options.fusion, sc.options.compiled_loss, sc.options.fp8_recipe, sc.options.hardware.precision)
    };
    // The example: compile.enable = false → eager PyTorch kernels, FP32 logits held.
    assert_eq!(read(TORCHTITAN), (Fusion::Eager, false, Fp8Recipe::TransformerEngine, Precision::Bf16));
    // Compiled with torchtitan's default components ["model", "loss"]: fused, loss compiled.
    let on = TORCHTITAN.replace("[compile]\nenable = false", "[compile]\nenable = true");
    assert_eq!(read(&on).0, Fusion::Fused);
    assert!(read(&on).1);
    let no_components = on.replace("components = [\"model\", \"loss\"]\n", "");
    assert_eq!(read(&no_components).0, Fusion::Fused);
    assert!(read(&no_components).1, "torchtitan's default components include the loss");
    // Only the model compiled: the loss keeps its FP32 logits.
    let model_only = on.replace("components = [\"model\", \"loss\"]", "components = [\"model\"]");
    assert_eq!((read(&model_only).0, read(&model_only).1), (Fusion::Fused, false));
    // Only the loss compiled: eager blocks.
    let loss_only = on.replace("components = [\"model\", \"loss\"]", "components = [\"loss\"]");
    assert_eq!((read(&loss_only).0, read(&loss_only).1), (Fusion::Eager, true));
    // No [compile] at all: torchtitan's default, off, with a note.
    let absent = TORCHTITAN.replace("[compile]\nenable = false\ncomponents = [\"model\", \"loss\"]\n", "");
    let l = launch::parse(&absent, Some("t.toml")).unwrap();
    assert!(l.notes.iter().any(|n| n.contains("compile.enable not given")), "{:?}", l.notes);
    assert_eq!(read(&absent).0, Fusion::Eager);
    // The older key `training.compile`, read with its note.
    let old = absent.replace("[training]\n", "[training]\ncompile = true\n");
    let l = launch::parse(&old, Some("t.toml")).unwrap();
    assert!(l.notes.iter().any(|n| n.contains("PR #1033")), "{:?}", l.notes);
    assert_eq!((read(&old).0, read(&old).1), (Fusion::Fused, true));
    // Float8 (a converter) is torchao's recipe, not Transformer Engine's.
    let fp8 = on.replace("flavor = \"8B\"", "flavor = \"8B\"\nconverters = [\"float8\"]");
    assert_eq!((read(&fp8).2, read(&fp8).3), (Fp8Recipe::Torchao, Precision::Fp8));
    // FSDP's float8 all-gather: the gathered linear weights are FP8 (and the key is not listed as
    // unused); off, or without Float8 linear layers, it changes nothing.
    let gather = fp8.replace("[training]\n", "[float8]\nenable_fsdp_float8_all_gather = true\n[training]\n");
    assert_ne!(gather, fp8);
    assert_eq!(read(&gather).2, Fp8Recipe::TorchaoFp8AllGather);
    let l = launch::parse(&gather, Some("t.toml")).unwrap();
    assert!(!l.unused.iter().any(|u| u.key.contains("enable_fsdp_float8_all_gather")), "{:?}", l.unused);
    assert_eq!(read(&gather.replace("all_gather = true", "all_gather = false")).2, Fp8Recipe::Torchao);
    let bf16 = on.replace("[training]\n", "[float8]\nenable_fsdp_float8_all_gather = true\n[training]\n");
    assert_eq!((read(&bf16).2, read(&bf16).3), (Fp8Recipe::TransformerEngine, Precision::Bf16));
    let bad = gather.replace("all_gather = true", "all_gather = \"sometimes\"");
    let e = launch::parse(&bad, Some("t.toml")).unwrap_err().to_string();
    assert!(e.contains("enable_fsdp_float8_all_gather"), "{e}");
    // Malformed: an unknown component, a value that is not a boolean.
    let bad = on.replace("components = [\"model\", \"loss\"]", "components = [\"model\", \"optimizer\"]");
    assert_eq!(field_of(&bad, "t.toml").as_deref(), Some("compile.components"));
    let bad = TORCHTITAN.replace("[compile]\nenable = false", "[compile]\nenable = \"sometimes\"");
    assert_eq!(field_of(&bad, "t.toml").as_deref(), Some("compile.enable"));
}

#[test]
fn pipeline_split_flags_count_the_ends_as_blocks() {
    use fmperf_core::extended::StageSplitRule;
    let rule = |text: &str, name: &str| scenario(text, name).options.stage_split;
    assert_eq!(rule(MEGATRON, "run.sh"), StageSplitRule::Blocks);
    // Megatron-LM's two flags, alone or together.
    let both = MEGATRON
        .replace("--bf16", "--bf16 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split");
    assert_ne!(both, MEGATRON, "the example sets --bf16");
    assert_eq!(rule(&both, "run.sh"), StageSplitRule::EndsAsBlocks);
    let l = launch::parse(&both, Some("run.sh")).unwrap();
    assert!(l.unused.iter().all(|u| !u.key.starts_with("--account-for")), "the flags are read, not listed");
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    assert!(sc.assumptions.iter().any(|n| n.contains("stage_split=ends_as_blocks")), "{:?}", sc.assumptions);
    let loss = MEGATRON.replace("--bf16", "--bf16 --account-for-loss-in-pipeline-split");
    assert_eq!(rule(&loss, "run.sh"), StageSplitRule::HeadAsBlock);
    // Megatron-DeepSpeed's partition method naming the embedding (BLOOM-176B's launch).
    let ds = MEGATRON.replace("--bf16", "--bf16 --pp-partition-method 'type:transformer|embedding'");
    assert_eq!(rule(&ds, "run.sh"), StageSplitRule::EndsAsBlocks);
    // Balancing by parameters is not modelled: listed with why, the split stays the blocks'.
    let params = MEGATRON.replace("--bf16", "--bf16 --pp-partition-method parameters");
    assert_eq!(rule(&params, "run.sh"), StageSplitRule::Blocks);
    let l = launch::parse(&params, Some("run.sh")).unwrap();
    let u = l.unused.iter().find(|u| u.key == "--pp-partition-method").expect("listed");
    assert!(u.why.contains("not modelled"), "{}", u.why);
    // The estimate follows: the end stages hold one block fewer, so the peak does not rise.
    let (_, plain) = estimate_text(MEGATRON, Some("run.sh"), &Overrides::default()).unwrap();
    let (_, counted) = estimate_text(&both, Some("run.sh"), &Overrides::default()).unwrap();
    assert!(counted.evaluation.memory_estimate.device_gb <= plain.evaluation.memory_estimate.device_gb);
    // NeMo / Megatron-Bridge YAML keys of the same names; without a pipeline they change nothing.
    let yaml = NEMO.replace("  fp8: false", "  fp8: false\n  account_for_embedding_in_pipeline_split: true");
    assert_ne!(yaml, NEMO);
    assert_eq!(rule(&yaml, "n.yaml"), StageSplitRule::Blocks, "pipeline_model_parallel_size is 1");
    let piped = yaml.replace("pipeline_model_parallel_size: 1", "pipeline_model_parallel_size: 2");
    assert_eq!(rule(&piped, "n.yaml"), StageSplitRule::EmbeddingAsBlock);
    // A value that is not a boolean names the flag.
    let bad = MEGATRON.replace("--bf16", "--bf16 --account-for-loss-in-pipeline-split=perhaps");
    let e = launch::parse(&bad, Some("run.sh")).unwrap_err().to_string();
    assert!(e.contains("--account-for-loss-in-pipeline-split"), "{e}");
}

#[test]
fn bloom_megatron_deepspeed_slurm_script() {
    use fmperf_core::extended::StageSplitRule;
    // The training command is a string run by `srun … bash -c "$LAUNCHER $CMD"`, its node count
    // Slurm's `$SLURM_NNODES` from `#SBATCH --nodes=48`.
    let l = launch::parse(BLOOM, Some("tr11.slurm")).unwrap();
    assert_eq!(l.format, Format::Megatron);
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    let (w, y, o) = (&sc.workload, &sc.layout, &sc.options);
    assert_eq!((w.layers, w.hidden, w.heads, w.ffn_hidden, w.seq_len), (70, 14336, 112, 57344, 2048));
    assert_eq!(w.vocab, Some(250_880), "--pad-vocab-size-to");
    assert_eq!((sc.devices, y.tp, y.pp, y.dp, y.mbs, y.global_batch), (384, 4, 12, 8, 2, 2048));
    // Megatron-DeepSpeed: --checkpoint-activations is full recomputation; BF16 with ZeRO stage 0
    // is DeepSpeed's BF16 optimizer (ZeRO-1's sharding, FP32 gradient accumulation); the
    // partition method counts the embeddings as blocks.
    assert_eq!((o.recompute, o.sharding), (Recompute::Full, Sharding::Zero1));
    assert!(o.grad_accumulation_buffer);
    assert_eq!(o.stage_split, StageSplitRule::EndsAsBlocks);
    assert!(!o.sequence_parallel);
    assert_eq!(o.hardware.precision, Precision::Bf16);
    assert_eq!(sc.system.as_deref(), Some("nvidia_a100_sxm4_80gb"));
    for key in ["--deepspeed_config", "--rampup-batch-size", "--ntasks-per-node", "--embed-layernorm"] {
        let u = l.unused.iter().find(|u| u.key == key).unwrap_or_else(|| panic!("{key} not listed"));
        assert!(!u.why.is_empty());
    }
    let ramp = l.unused.iter().find(|u| u.key == "--rampup-batch-size").unwrap();
    assert_eq!(ramp.value, "192 16 9_765_625", "a flag of three values keeps them");
    assert!(l.unused.iter().all(|u| u.why != "a word without a flag; not used"), "{:?}", l.unused);
    // ZeRO stages without the BF16 optimizer are read as they are; a bad stage names the flag.
    let fp16 = BLOOM.replace("--bf16", "--fp16");
    let sc = scenario(&fp16, "tr11.slurm");
    assert_eq!((sc.options.sharding, sc.options.grad_accumulation_buffer), (Sharding::Ddp, false));
    let z1 = BLOOM.replace("ZERO_STAGE=0", "ZERO_STAGE=1");
    assert_eq!(scenario(&z1, "tr11.slurm").options.sharding, Sharding::Zero1);
    let bad = BLOOM.replace("ZERO_STAGE=0", "ZERO_STAGE=4");
    let e = launch::parse(&bad, Some("tr11.slurm")).unwrap_err().to_string();
    assert!(e.contains("--zero-stage"), "{e}");
    // And it is estimated: about BLOOM-176B's own 02-28 trial of this layout (59 GB on nvidia-smi).
    let (_, est) = estimate_text(BLOOM, Some("tr11.slurm"), &Overrides::default()).unwrap();
    let device = est.evaluation.memory_estimate.device_gb;
    assert!((50.0..70.0).contains(&device), "{device} GB");
}

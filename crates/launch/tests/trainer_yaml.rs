//! The Hugging Face Trainer / Accelerate YAML reader (`trainer_yaml`): snippets written here in
//! the style of LLaMA-Factory's, alignment-handbook's and Accelerate's files, errors, hostile input.

use fmperf_core::catalog::Precision;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_launch::{Format, Launch, Overrides, Source, detect, estimate_files, parse, parse_files, why};

const LLAMA_FACTORY: &str = "\
### model
model_name_or_path: Qwen/Qwen3-4B
trust_remote_code: true

### method
stage: sft
do_train: true
finetuning_type: full
deepspeed: examples/deepspeed/ds_z3_config.json  # choices: [ds_z0_config.json]

### dataset
dataset: identity,alpaca_en_demo
template: qwen3
cutoff_len: 2048

### train
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
learning_rate: 1.0e-5
bf16: true
report_to: none
ddp_timeout: 180000000
";

const HANDBOOK: &str = "\
model_name_or_path: mistralai/Mistral-7B-v0.1
torch_dtype: bfloat16
attn_implementation: flash_attention_2
bf16: true
gradient_accumulation_steps: 2
gradient_checkpointing: true
gradient_checkpointing_kwargs:
  use_reentrant: False
max_seq_length: 4096
per_device_train_batch_size: 8
report_to:
- wandb
seed: 42
";

const ZERO3: &str = "\
compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  deepspeed_multinode_launcher: standard
  offload_optimizer_device: none
  offload_param_device: cpu
  zero3_init_flag: true
  zero_stage: 3
distributed_type: DEEPSPEED
mixed_precision: bf16
machine_rank: 0
num_machines: 2
num_processes: 16
use_cpu: false
";

fn read(text: &str) -> Launch {
    assert_eq!(detect(text, Some("config.yaml")).unwrap(), Format::TrainerYaml);
    parse(text, Some("config.yaml")).unwrap()
}

fn why_of<'a>(l: &'a Launch, key: &str) -> &'a str {
    l.unused.iter().find(|u| u.key == key).map_or("", |u| u.why.as_str())
}

#[test]
fn llama_factory_yaml_reads_batch_length_precision_and_its_checkpointing_default() {
    let l = read(LLAMA_FACTORY);
    let s = &l.settings;
    assert_eq!((s.mbs.copied(), s.grad_accumulation.copied(), s.seq_len.copied()), (Some(2), Some(4), Some(2048)));
    assert_eq!(s.precision.copied(), Some(Precision::Bf16));
    assert_eq!((s.tp.copied(), s.pp.copied()), (Some(1), Some(1)));
    assert_eq!(s.model_name.get().map(String::as_str), Some("Qwen/Qwen3-4B"));
    // LLaMA-Factory checkpoints gradients unless told not to.
    assert_eq!(s.recompute.copied(), Some(Recompute::Full));
    assert!(l.notes.iter().any(|n| n.contains("LLaMA-Factory recomputes")), "{:?}", l.notes);
    assert!(why_of(&l, "deepspeed").contains("--from examples/deepspeed/ds_z3_config.json"), "{:?}", l.unused);
    assert_eq!(why_of(&l, "learning_rate"), why::HYPERPARAMETER);
    assert_eq!(why_of(&l, "dataset"), why::DATA);
    assert_eq!(why_of(&l, "ddp_timeout"), why::JOB);
    assert_eq!(l.unused.iter().filter(|u| u.key == "deepspeed").count(), 1);
    // Told not to.
    let off = read(&format!("{LLAMA_FACTORY}disable_gradient_checkpointing: true\n"));
    assert_eq!(off.settings.recompute.copied(), Some(Recompute::None));
    // LoRA is listed as not modelled, never silently dropped.
    let lora = read(&LLAMA_FACTORY.replace("finetuning_type: full", "finetuning_type: lora"));
    assert!(why_of(&lora, "finetuning_type").contains("LoRA"));
}

#[test]
fn handbook_recipe_reads_as_the_trainer_flags_do() {
    let l = read(HANDBOOK);
    let s = &l.settings;
    assert_eq!((s.mbs.copied(), s.grad_accumulation.copied(), s.seq_len.copied()), (Some(8), Some(2), Some(4096)));
    assert_eq!(s.recompute.copied(), Some(Recompute::Full));
    assert_eq!(s.precision.copied(), Some(Precision::Bf16));
    assert!(why_of(&l, "torch_dtype").contains("loaded"));
    assert!(l.unused.iter().any(|u| u.key == "report_to.0"));
    // Without gradient_checkpointing the Trainer keeps every activation (a note, not a guess).
    let plain = read(&HANDBOOK.replace("gradient_checkpointing: true\n", ""));
    assert!(plain.settings.recompute.get().is_none());
    assert!(plain.notes.iter().any(|n| n.contains("keeps every activation")));
    // Without bf16 the precision is left to the other files, said in a note.
    let fp = read(&HANDBOOK.replace("bf16: true\n", ""));
    assert!(fp.settings.precision.get().is_none());
    assert!(fp.notes.iter().any(|n| n.contains("no bf16 or fp16")));
}

#[test]
fn accelerate_config_gives_devices_sharding_and_precision() {
    let l = read(ZERO3);
    let s = &l.settings;
    assert_eq!((s.devices.copied(), s.nodes.copied()), (Some(16), Some(2)));
    assert_eq!(s.sharding.copied(), Some(Sharding::Zero3));
    assert_eq!(s.precision.copied(), Some(Precision::Bf16));
    assert!(why_of(&l, "deepspeed_config.offload_param_device").contains("not modelled"));
    assert_eq!(why_of(&l, "deepspeed_config.offload_optimizer_device"), "no offload");
    // A DeepSpeed section under another backend is ignored by Accelerate.
    let ddp = read(&ZERO3.replace("DEEPSPEED", "MULTI_GPU"));
    assert_eq!(ddp.settings.sharding.copied(), Some(Sharding::Ddp));
    assert!(why_of(&ddp, "deepspeed_config.zero_stage").contains("ignored"));
    let z1 = read(&ZERO3.replace("zero_stage: 3", "zero_stage: 1"));
    assert_eq!(z1.settings.sharding.copied(), Some(Sharding::Zero1));
    let z0 = read(&ZERO3.replace("zero_stage: 3", "zero_stage: 0"));
    assert_eq!(z0.settings.sharding.copied(), Some(Sharding::Ddp));
}

#[test]
fn fsdp_strategies_map_as_the_trainer_fsdp_flag() {
    let fsdp = |strategy: &str| {
        format!(
            "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  \
             fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  {strategy}\n  fsdp_offload_params: false\n\
             mixed_precision: fp16\nnum_processes: 8\n"
        )
    };
    let sharding = |s: &str| read(&fsdp(s)).settings.sharding.copied();
    assert_eq!(sharding("fsdp_sharding_strategy: FULL_SHARD"), Some(Sharding::Zero3));
    assert_eq!(sharding("fsdp_sharding_strategy: 1"), Some(Sharding::Zero3));
    assert_eq!(sharding("fsdp_sharding_strategy: SHARD_GRAD_OP"), Some(Sharding::Zero2));
    assert_eq!(sharding("fsdp_sharding_strategy: NO_SHARD"), Some(Sharding::Ddp));
    assert_eq!(sharding("fsdp_sharding_strategy: HYBRID_SHARD_ZERO2"), Some(Sharding::Zero2));
    assert_eq!(sharding("fsdp_reshard_after_forward: false"), Some(Sharding::Zero2));
    let l = read(&fsdp("fsdp_activation_checkpointing: true"));
    assert_eq!(l.settings.recompute.copied(), Some(Recompute::Full));
    assert_eq!(l.settings.precision.copied(), Some(Precision::Fp16));
    let e = parse(&fsdp("fsdp_sharding_strategy: HALF_SHARD"), None).unwrap_err();
    assert_eq!(e.field(), Some("fsdp_config.fsdp_sharding_strategy"));
}

#[test]
fn values_fmperf_cannot_read_are_errors_naming_the_key() {
    let e = parse(&LLAMA_FACTORY.replace("stage: sft", "stage: dpo"), None).unwrap_err();
    assert_eq!(e.field(), Some("stage"));
    // A TRL DPO recipe states no stage: its keys say it.
    let e = parse(&format!("{HANDBOOK}beta: 0.01\nmax_prompt_length: 512\n"), None).unwrap_err();
    assert_eq!(e.field(), Some("beta"));
    let e = parse(&ZERO3.replace("mixed_precision: bf16", "mixed_precision: int4"), None).unwrap_err();
    assert_eq!(e.field(), Some("mixed_precision"));
    let e = parse(&ZERO3.replace("zero_stage: 3", "zero_stage: 7"), None).unwrap_err();
    assert_eq!(e.field(), Some("deepspeed_config.zero_stage"));
    let e = parse(&ZERO3.replace("num_processes: 16", "num_processes: many"), None).unwrap_err();
    assert_eq!(e.field(), Some("num_processes"));
    let e = parse(&ZERO3.replace("distributed_type: DEEPSPEED", "distributed_type: XLA"), None).unwrap_err();
    assert_eq!(e.field(), Some("distributed_type"));
    let e =
        parse(&HANDBOOK.replace("per_device_train_batch_size: 8", "per_device_train_batch_size: 0"), None).unwrap_err();
    assert_eq!(e.field(), Some("per_device_train_batch_size"));
}

#[test]
fn recipe_and_accelerate_config_together_make_one_run() {
    let sources = [Source { name: Some("zero3.yaml"), text: ZERO3 }, Source { name: Some("sft.yaml"), text: HANDBOOK }];
    let l = parse_files(&sources, &[]).unwrap();
    assert_eq!(l.format, Format::TrainerYaml);
    assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero3));
    assert_eq!((l.settings.devices.copied(), l.settings.mbs.copied()), (Some(16), Some(8)));
    let o = Overrides { system: Some("nvidia_h100_sxm5_80gb".into()), ..Overrides::default() };
    let (launch, e) = estimate_files(&sources, &[], &o).unwrap();
    let got = e.to_json(&launch);
    // Micro-batch 8 × accumulation 2 × 16 data-parallel devices; the shape from the model's name.
    assert_eq!(got["config"]["global_batch"].as_u64(), Some(256), "{got}");
    assert_eq!(got["config"]["tp"].as_u64(), Some(1));
    assert_eq!(got["model"]["layers"].as_u64(), Some(32));
    // Mistral 7B's head is its own (tie_word_embeddings: false), as the named model's shape says;
    // the estimate once reported Megatron's tied default here.
    assert_eq!(got["model"]["tied_embeddings"].as_bool(), Some(false), "{got}");
}

#[test]
fn other_yaml_formats_keep_their_reader() {
    assert_eq!(detect("model:\n  num_layers: 2\n  micro_batch_size: 1\n", Some("gpt.yaml")).unwrap(), Format::NemoYaml);
    // A nested key of the same name is not a Trainer YAML.
    assert_eq!(detect("model:\n  model_name_or_path: x\n", Some("a.yaml")).unwrap(), Format::NemoYaml);
    assert_eq!(detect("per_device_train_batch_size: 4\n", None).unwrap(), Format::TrainerYaml);
    // A script writing such a YAML in a here-document stays a script.
    let script = "#!/bin/bash\ncat > a.yaml <<EOF\nper_device_train_batch_size: 4\nEOF\ntorchrun train.py --bf16\n";
    assert_ne!(detect(script, None).unwrap(), Format::TrainerYaml);
    assert_ne!(detect("per_device_train_batch_size: 4\n", Some("run.sh")).unwrap(), Format::TrainerYaml);
}

#[test]
fn hostile_input_never_panics() {
    let mut bomb = String::from("per_device_train_batch_size: 1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        bomb.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
    }
    assert!(parse(&bomb, None).is_err());
    let deep = format!("distributed_type: FSDP\nfsdp_config: {}{}\n", "[".repeat(5000), "]".repeat(5000));
    let _ = parse(&deep, None);
    let junk: String = (0..20_000u32).map(|i| char::from_u32(i * 7919 % 0xD000).unwrap_or('x')).collect();
    let _ = parse(&format!("num_processes: 8\n{junk}"), None);
    let big = format!("cutoff_len: 8\n{}", "learning_rate: 1\n".repeat(600_000));
    assert!(parse(&big, None).is_err(), "a key given many times is an error");
    let huge = format!("per_device_train_batch_size: {}\n", "9".repeat(10_000));
    assert!(parse(&huge, None).is_err());
    let _ = parse("per_device_train_batch_size:\n  - 1\n  - {a: [}\n", None);
    let _ = parse("compute_environment: LOCAL_MACHINE\ndeepspeed_config: 3\ndistributed_type: DEEPSPEED\n", None);
}

#[test]
fn liger_kernel_runs_the_head_inside_the_loss_chunks() {
    let liger = HANDBOOK.replace("seed: 42\n", "seed: 42\nuse_liger_kernel: true\n");
    let l = read(&liger);
    assert_eq!(l.settings.loss_head_chunked.copied(), Some(true));
    assert!(l.unused.iter().all(|u| u.key != "use_liger_kernel"), "{:?}", l.unused);
    let off = read(&HANDBOOK.replace("seed: 42\n", "seed: 42\nuse_liger_kernel: false\n"));
    assert_eq!(off.settings.loss_head_chunked.copied(), None);
    assert!(why_of(&off, "use_liger_kernel").contains("Liger's kernels off"), "{:?}", off.unused);
    let o = Overrides { system: Some("nvidia_h100_sxm5_80gb".into()), ..Overrides::default() };
    let activations = |text: &str| {
        let sources = [Source { name: Some("zero3.yaml"), text: ZERO3 }, Source { name: Some("sft.yaml"), text }];
        let (launch, e) = estimate_files(&sources, &[], &o).unwrap();
        let got = e.to_json(&launch);
        // The logits and loss are counted with the activations in the estimate's parts.
        (got["memory"]["parts_gb"]["activations"].as_f64().unwrap_or_else(|| panic!("{got}")), got)
    };
    // Mistral 7B, 8 × 4096 tokens: Liger's chunks: inc = ⌈32000 / 4096⌉ = 8, chunk =
    // next_pow2(⌈32768 / 8⌉) = 4096 tokens, 8 chunks. Whole: 32768 × 32000 × 10 B; Liger: one
    // chunk, 4096 × 32000 × 10 B, plus 32768 × 4096 × 4 B of hidden-state gradient.
    let (whole, _) = activations(HANDBOOK);
    let (chunked, got) = activations(&liger);
    let saved = (32768.0 * 32000.0 * 10.0 - (4096.0 * 32000.0 * 10.0 + 32768.0 * 4096.0 * 4.0)) * 1e-9;
    assert!((whole - chunked - saved).abs() < 1e-6, "{whole} - {chunked} vs {saved}");
    assert!(got.to_string().contains("loss_chunks=8"), "{got}");
}

/// LLaMA-Factory's `pure_bf16: true` (hiyouga/LLaMA-Factory at ff6d4d12,
/// `src/llamafactory/hparams/finetuning_args.py` l. 456–459: "train model in purely bf16 precision
/// (without AMP)"; `model/adapter.py` l. 337–345: the trainable parameters are not upcast to FP32)
/// is core's `optimizer_states=pure_bf16`; with DeepSpeed ZeRO-3 it is refused, as LLaMA-Factory
/// refuses it (`hparams/parser.py` l. 502–503).
#[test]
fn pure_bf16_keeps_no_fp32_master_and_is_refused_with_deepspeed_zero3() {
    use fmperf_core::extended::OptimizerStates;
    let pure = format!("{LLAMA_FACTORY}pure_bf16: true\n");
    let l = read(&pure);
    assert_eq!(l.settings.optimizer_states.copied(), Some(OptimizerStates::PureBf16));
    assert!(l.unused.iter().all(|u| u.key != "pure_bf16"), "{:?}", l.unused);
    assert_eq!(read(LLAMA_FACTORY).settings.optimizer_states.copied(), None);
    let o = Overrides { system: Some("nvidia_h100_sxm5_80gb".into()), ..Overrides::default() };
    const DDP: &str = "\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: bf16
num_machines: 1
num_processes: 8
";
    let parts = |text: &str| {
        let sources = [Source { name: Some("ddp.yaml"), text: DDP }, Source { name: Some("sft.yaml"), text }];
        let (launch, e) = estimate_files(&sources, &[], &o).unwrap();
        let got = e.to_json(&launch);
        let p = &got["memory"]["parts_gb"];
        let gb = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k} in {got}"));
        (gb("weights"), gb("gradients"), gb("optimizer"), got)
    };
    // DDP keeps every state whole. Mixed precision: 2 B weights, 4 B FP32 gradients, 12 B
    // (master + two moments); pure BF16: 2 + 2 + 4 B. Same weights, gradients ÷ 2, optimizer ÷ 3.
    let (w, g, s, _) = parts(LLAMA_FACTORY);
    let (pw, pg, ps, got) = parts(&pure);
    assert!((pw - w).abs() < 1e-9 && (pg - g / 2.0).abs() < 1e-9 && (ps - s / 3.0).abs() < 1e-9, "{got}");
    assert!(got.to_string().contains("optimizer_states=pure_bf16"), "{got}");
    // With ZeRO-3 (the DeepSpeed Accelerate config) it is an error naming the key and its line.
    let sources = [Source { name: Some("zero3.yaml"), text: ZERO3 }, Source { name: Some("sft.yaml"), text: &pure }];
    let e = estimate_files(&sources, &[], &o).unwrap_err().to_string();
    assert!(e.contains("pure_bf16") && e.contains("ZeRO-3"), "{e}");
    // With FP16 stated beside it the file says two precisions: an error naming both keys.
    let fp16 = pure.replace("\nbf16: true\n", "\nfp16: true\n");
    assert!(fp16.contains("\nfp16: true\n") && !fp16.contains("\nbf16: true"), "{fp16}");
    let ddp = DDP.replace("mixed_precision: bf16\n", "");
    let sources = [Source { name: Some("ddp.yaml"), text: &ddp }, Source { name: Some("sft.yaml"), text: &fp16 }];
    let e = estimate_files(&sources, &[], &o).unwrap_err().to_string();
    assert!(e.contains("pure_bf16") && e.contains("fp16") && e.contains("keep one"), "{e}");
}

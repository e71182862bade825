//! The way back: a shipped launch read, given another layout, written (in place and fresh), read
//! again: the same layout and the same time per step (within 0.1 %), and in place every line that
//! does not carry the layout kept byte for byte.

use fmperf_core::extended::{ExtendedOptions, Layout, Recompute, Sharding, Stack};
use fmperf_launch::emit::{Input, Target, emit, layout_only};
use fmperf_launch::{Launch, LaunchScenario, Overrides, estimate, hardware, parse};

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/launch/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn scenario(text: &str, name: &str) -> (Launch, LaunchScenario) {
    let l = parse(text, Some(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    (l, sc)
}

/// Time per step [s] of `sc` on its own system.
fn time(sc: &LaunchScenario) -> f64 {
    let spec = sc.system.clone().expect("the examples name their system");
    let (id, hw, _) = hardware(&spec, sc.options.hardware.precision, sc.options.hardware.measured_ceiling).unwrap();
    estimate(sc, &id, &hw).unwrap().evaluation.totals.t
}

/// The layout facts compared after a round trip: tp, pp, cp, dp, mbs, global batch, vpp, ep, etp,
/// recomputation, sharding, shard group.
type Facts = (u64, u64, u64, u64, u64, u64, u64, u64, u64, Recompute, Sharding, Option<u64>);

/// A layout's switches changed for a case.
type Change = fn(&mut ExtendedOptions);

fn facts(sc: &LaunchScenario) -> Facts {
    let y = &sc.layout;
    let o = &sc.options;
    (y.tp, y.pp, y.cp, y.dp, y.mbs, y.global_batch, o.interleave, y.ep, y.etp, o.recompute, o.sharding, o.shard_group)
}

/// Line-level diff: the lines of `a` not kept in `b` and the lines of `b` not in `a` (an LCS).
fn changed<'a>(a: &'a str, b: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let x: Vec<&str> = a.lines().collect();
    let y: Vec<&str> = b.lines().collect();
    let mut t = vec![vec![0u32; y.len() + 1]; x.len() + 1];
    for i in (0..x.len()).rev() {
        for j in (0..y.len()).rev() {
            t[i][j] = if x[i] == y[j] { t[i + 1][j + 1] + 1 } else { t[i + 1][j].max(t[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let (mut gone, mut new) = (Vec::new(), Vec::new());
    while i < x.len() && j < y.len() {
        if x[i] == y[j] {
            i += 1;
            j += 1;
        } else if t[i + 1][j] >= t[i][j + 1] {
            gone.push(x[i]);
            i += 1;
        } else {
            new.push(y[j]);
            j += 1;
        }
    }
    gone.extend(&x[i..]);
    new.extend(&y[j..]);
    (gone, new)
}

/// Emits `sc` with `layout`/`options` in place of `name`, reads it back and checks the layout, the
/// time and that only lines holding one of `layout_words` changed. Returns the emitted text.
fn round_trip(
    name: &str,
    target: Target,
    layout: Layout,
    change: impl Fn(&mut ExtendedOptions),
    layout_words: &[&str],
) -> String {
    let text = example(name);
    let (l, sc) = scenario(&text, name);
    let mut options = sc.options;
    change(&mut options);
    let want = LaunchScenario { layout, options, ..sc.clone() };
    let out = emit(target, Some(Input { text: &text, launch: &l, name: Some(name) }), &sc, &layout, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(out.in_place, "{name}");
    let (_, back) = scenario(&out.text, &out.file_name);
    assert_eq!(facts(&back), facts(&want), "{name}: layout read back\n{}\nnotes: {:?}", out.text, out.notes);
    assert_eq!(back.options.sequence_parallel, want.options.sequence_parallel, "{name}: sequence parallel");
    assert_eq!(back.devices, sc.devices);
    let (t0, t1) = (time(&want), time(&back));
    assert!((t1 / t0 - 1.0).abs() < 1e-3, "{name}: {t0} s before, {t1} s after");
    let (gone, new) = changed(&text, &out.text);
    assert!(!gone.is_empty() || !new.is_empty(), "{name}: nothing changed");
    for line in gone.iter().chain(&new) {
        assert!(
            line.trim().is_empty() || layout_words.iter().any(|w| line.contains(w)),
            "{name}: a line that does not carry the layout changed: {line:?}\n{}",
            out.text
        );
    }
    out.text
}

const MEGATRON_WORDS: &[&str] = &[
    "tensor-model-parallel",
    "pipeline-model-parallel",
    "context-parallel",
    "expert-",
    "micro-batch",
    "global-batch",
    "virtual",
    "recompute",
    "checkpoint-activations",
    "distributed-optimizer",
    "fsdp",
    "sequence-parallel",
    "zero-stage",
    "TP=",
    "PP=",
    "CP=",
    "EP=",
    "MBS=",
    "GBS=",
    "TP_SIZE=",
    "PP_SIZE=",
    "MICRO_BATCH_SIZE=",
    "GLOBAL_BATCH_SIZE=",
    "ZERO_STAGE=",
];

const YAML_WORDS: &[&str] = &[
    "_parallel_size",
    "micro_batch_size",
    "global_batch_size",
    "checkpoint_",
    "recompute_",
    "sequence_parallel",
    "use_distributed_optimizer",
    "optim",
    "ddp",
    "fsdp",
];

const TOML_WORDS: &[&str] =
    &["_degree", "pipeline_parallel_", "local_batch_size", "global_batch_size", "mode", "selective_ac_option"];

#[test]
fn megatron_llama3_70b_in_place() {
    // tp 8 · pp 4 · vpp 4 (5 blocks per virtual stage) · selective → tp 4 · pp 8 · vpp 2 · full, no SP.
    let y = Layout::placed(4, 1, 8, 2, 2, 128, 1);
    let text = round_trip(
        "megatron-llama3-70b.sh",
        Target::Megatron,
        y,
        |o| {
            o.interleave = 2;
            o.recompute = Recompute::Full;
            o.sequence_parallel = false;
        },
        MEGATRON_WORDS,
    );
    // The variables' assignments carry the new values; the flags keep their `$TP`.
    assert!(text.contains("\nTP=4\n") && text.contains("\nPP=8\n") && text.contains("\nMBS=2\n"), "{text}");
    assert!(text.contains("--tensor-model-parallel-size $TP\n"), "{text}");
    assert!(text.contains("--num-layers-per-virtual-pipeline-stage 5\n"), "{text}");
    assert!(!text.contains("--sequence-parallel"), "{text}");
    // No interleaving, no recomputation, no distributed optimizer: flags removed.
    let y = Layout::placed(8, 1, 1, 8, 1, 128, 1);
    let text = round_trip(
        "megatron-llama3-70b.sh",
        Target::Megatron,
        y,
        |o| {
            o.interleave = 1;
            o.recompute = Recompute::None;
            o.sharding = Sharding::Ddp;
        },
        MEGATRON_WORDS,
    );
    assert!(!text.contains("virtual-pipeline") && !text.contains("--use-distributed-optimizer"), "{text}");
    assert!(!text.contains("--recompute-activations"), "{text}");
}

#[test]
fn megatron_deepseek_v3_in_place() {
    let y = Layout::placed(2, 1, 8, 64, 1, 4096, 1).with_experts(64, 1);
    round_trip("megatron-deepseek-v3.sh", Target::Megatron, y, |o| o.recompute = Recompute::Selective, MEGATRON_WORDS);
}

#[test]
fn bloom_megatron_deepspeed_in_place() {
    let y = Layout::placed(8, 1, 6, 8, 1, 2048, 1);
    let text = round_trip("bloom-176b-megatron-deepspeed.slurm", Target::Megatron, y, |_| {}, MEGATRON_WORDS);
    assert!(text.contains("\nTP_SIZE=8\n") && text.contains("\nMICRO_BATCH_SIZE=1\n"), "{text}");
    assert!(text.contains("ZERO_STAGE=0   # with bf16"), "{text}");
}

#[test]
fn nemo_llama3_8b_in_place() {
    let y = Layout::placed(4, 1, 2, 2, 2, 128, 1);
    let text = round_trip(
        "nemo-llama3-8b.yaml",
        Target::Nemo,
        y,
        |o| {
            o.interleave = 2;
            o.recompute = Recompute::Full;
        },
        YAML_WORDS,
    );
    assert!(text.contains("  virtual_pipeline_model_parallel_size: 2\n"), "{text}");
    assert!(text.contains("  activations_checkpoint_method: uniform\n"), "{text}");
}

#[test]
fn bridge_mixtral_in_place() {
    let y = Layout::placed(2, 1, 2, 8, 1, 256, 1).with_experts(8, 1);
    let text = round_trip(
        "bridge-mixtral-8x7b.yaml",
        Target::Nemo,
        y,
        |o| {
            o.interleave = 1;
            o.recompute = Recompute::Full;
            o.sequence_parallel = true;
        },
        YAML_WORDS,
    );
    assert!(text.contains("  virtual_pipeline_model_parallel_size: null\n"), "{text}");
}

#[test]
fn torchtitan_llama3_8b_in_place() {
    let y = Layout::placed(2, 1, 2, 2, 1, 8, 1);
    let text = round_trip(
        "torchtitan-llama3-8b.toml",
        Target::Torchtitan,
        y,
        |o| {
            o.recompute = Recompute::Full;
            o.sequence_parallel = true;
        },
        TOML_WORDS,
    );
    assert!(
        text.contains("[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 2\n"),
        "{text}"
    );
    // HSDP: shards of 2 inside 4 data-parallel ranks (2 replicas).
    let y = Layout::placed(1, 1, 1, 8, 1, 16, 1);
    round_trip("torchtitan-llama3-8b.toml", Target::Torchtitan, y, |o| o.shard_group = Some(4), TOML_WORDS);
}

/// Fresh files read back with the same layout and time (the scenario's own format).
#[test]
fn fresh_files_read_back() {
    let cases: [(&str, Target, Layout, Change); 3] = [
        ("megatron-llama3-70b.sh", Target::Megatron, Layout::placed(4, 1, 8, 2, 1, 128, 1), |o| o.interleave = 2),
        ("nemo-llama3-8b.yaml", Target::Nemo, Layout::placed(2, 2, 1, 4, 1, 128, 1), |_| {}),
        ("torchtitan-llama3-8b.toml", Target::Torchtitan, Layout::placed(2, 1, 1, 4, 2, 16, 1), |o| {
            // torchtitan's tensor parallelism always runs with sequence parallelism.
            o.recompute = Recompute::Full;
            o.sequence_parallel = true;
        }),
    ];
    for (name, target, layout, change) in cases {
        let (_, sc) = scenario(&example(name), name);
        let mut options = sc.options;
        change(&mut options);
        let want = LaunchScenario { layout, options, ..sc.clone() };
        let out = emit(target, None, &sc, &layout, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            !out.in_place
                && out.text.starts_with(if target == Target::Megatron {
                    "#!/bin/bash\n# Written by fmperf"
                } else {
                    "# Written by fmperf"
                })
        );
        let (_, back) = scenario(&out.text, &out.file_name);
        assert_eq!(facts(&back), facts(&want), "{name}:\n{}", out.text);
        let (t0, t1) = (time(&want), time(&back));
        assert!((t1 / t0 - 1.0).abs() < 1e-3, "{name}: {t0} s before, {t1} s after\n{}", out.text);
    }
}

/// A Megatron launch written as the other frameworks' files: each reads back with its layout.
#[test]
fn cross_framework_files_keep_the_layout() {
    let name = "megatron-llama3-70b.sh";
    let text = example(name);
    let (l, sc) = scenario(&text, name);
    let layout = Layout::placed(8, 1, 2, 4, 1, 128, 1);
    let options = ExtendedOptions { interleave: 1, ..sc.options };
    let input = Some(Input { text: &text, launch: &l, name: Some(name) });
    let out = emit(Target::Nemo, input, &sc, &layout, &options).unwrap();
    assert!(out.notes.iter().any(|n| n.contains("not carried over")), "{:?}", out.notes);
    let (_, back) = scenario(&out.text, &out.file_name);
    assert_eq!(
        (back.layout.tp, back.layout.pp, back.layout.dp, back.options.recompute),
        (8, 2, 4, Recompute::Selective)
    );
    // torchtitan has no llama3 flavour for this exact 70B run? It has: 70B.
    let out = emit(Target::Torchtitan, input, &sc, &Layout::placed(8, 1, 1, 8, 1, 128, 1), &options).unwrap();
    assert!(out.notes.iter().any(|n| n.contains("Megatron's: the attention core only")), "{:?}", out.notes);
    assert!(out.text.contains("flavor = \"70B\""), "{}", out.text);
    let (_, back) = scenario(&out.text, &out.file_name);
    assert_eq!((back.layout.tp, back.layout.dp, back.options.sharding), (8, 8, Sharding::Zero3));
    assert!(out.notes.iter().any(|n| n.contains("zero1")), "{:?}", out.notes);
}

/// MaxText: its reader is being written; the emitted keys are checked as text.
#[test]
fn maxtext_keys_are_written() {
    let name = "megatron-llama3-70b.sh";
    let (_, sc) = scenario(&example(name), name);
    let layout = Layout::placed(4, 1, 4, 4, 1, 128, 1);
    let out = emit(Target::MaxText, None, &sc, &layout, &sc.options).unwrap();
    for kv in [
        // The scenario runs sequence parallelism: MaxText's tensor_sequence axis.
        "ici_tensor_sequence_parallelism=4",
        "ici_pipeline_parallelism=4",
        "ici_fsdp_parallelism=4",
        "ici_data_parallelism=1",
        "per_device_batch_size=2",
        "num_pipeline_microbatches=32",
        "max_target_length=8192",
        "base_emb_dim=8192",
        "base_num_kv_heads=8",
        "remat_policy=minimal",
        "dtype=bfloat16",
    ] {
        assert!(out.text.contains(kv), "{kv} missing:\n{}", out.text);
    }
    assert!(out.notes.iter().any(|n| n.contains("num_pipeline_microbatches")), "{:?}", out.notes);
    assert!(out.notes.iter().any(|n| n.contains("zero1")), "{:?}", out.notes);
    let y = Layout::placed(8, 1, 1, 2, 1, 64, 1);
    let p = layout_only(Target::MaxText, &LaunchScenario { devices: 16, ..sc.clone() }, &y, &sc.options).unwrap();
    assert!(p.text.contains("ici_tensor_sequence_parallelism=8 \\\n"), "{}", p.text);
    assert!(p.text.contains("gradient_accumulation_steps=32"), "{}", p.text);
}

#[test]
fn layout_only_and_errors() {
    let name = "nemo-llama3-8b.yaml";
    let (_, sc) = scenario(&example(name), name);
    let y = Layout::placed(2, 1, 2, 4, 1, 128, 1);
    let o = ExtendedOptions { interleave: 2, ..sc.options };
    let f = layout_only(Target::Megatron, &sc, &y, &o).unwrap();
    assert!(f.text.contains("--tensor-model-parallel-size 2 \\\n--pipeline-model-parallel-size 2"), "{}", f.text);
    assert!(f.text.contains("--num-layers-per-virtual-pipeline-stage 8"), "{}", f.text);
    let t = layout_only(Target::Torchtitan, &sc, &y, &o).unwrap();
    assert!(t.text.starts_with("[parallelism]\n"), "{}", t.text);
    let b = layout_only(Target::Nemo, &sc, &y, &o).unwrap();
    assert!(b.text.contains("train:\n  micro_batch_size: 1\n"), "{}", b.text);
    // A layout on other devices than the scenario's is refused, as is a batch that does not divide.
    let e = emit(Target::Megatron, None, &sc, &Layout::placed(2, 1, 2, 2, 1, 128, 1), &o).unwrap_err();
    assert_eq!(e.field(), Some("layout"));
    let e = emit(Target::Megatron, None, &sc, &Layout::placed(2, 1, 2, 4, 3, 128, 1), &o).unwrap_err();
    assert_eq!(e.field(), Some("layout.global_batch"));
}

/// MaxText: a fresh command line and one rewritten in place read back with their layout.
#[test]
fn maxtext_round_trips() {
    let name = "megatron-llama3-70b.sh";
    let (_, sc) = scenario(&example(name), name);
    // What MaxText expresses: FSDP, tensor axis with sequence parallelism, full recomputation.
    for (layout, change) in [
        (Layout::placed(4, 1, 1, 16, 1, 128, 1), (|o| o.recompute = Recompute::Full) as Change),
        (Layout::placed(8, 1, 2, 4, 1, 128, 1), |o| o.recompute = Recompute::None),
    ] {
        let mut options = ExtendedOptions { sharding: Sharding::Zero3, interleave: 1, ..sc.options };
        change(&mut options);
        let out = emit(Target::MaxText, None, &sc, &layout, &options).unwrap();
        // Read back, the file runs on MaxText's stack (JAX/XLA: FSDP's collectives combined and
        // prefetched), which is what its time is compared with.
        let want = LaunchScenario { layout, options: ExtendedOptions { stack: Stack::Jax, ..options }, ..sc.clone() };
        let (l, back) = scenario(&out.text, &out.file_name);
        assert_eq!(l.format, fmperf_launch::Format::MaxText);
        assert_eq!(facts(&back), facts(&want), "{}\n{:?}", out.text, out.notes);
        let (t0, t1) = (time(&want), time(&back));
        assert!((t1 / t0 - 1.0).abs() < 1e-3, "{t0} s before, {t1} s after\n{}", out.text);
    }
    // In place: a command line's values replaced, the missing axes added on continued lines, every
    // other word kept.
    let cmd = "# fmperf: system=nvidia_h100_sxm5_80gb gpus=16\n\
               python3 -m MaxText.train MaxText/configs/base.yml run_name=llama3 \\\n    model_name=llama3-8b \\\n    \
               ici_fsdp_parallelism=16 \\\n    per_device_batch_size=2 \\\n    max_target_length=8192 steps=100 \\\n    \
               dataset_type=synthetic\n";
    let (l, sc) = scenario(cmd, "run.sh");
    let layout = Layout::placed(4, 1, 1, 4, 2, 64, 1);
    let options = ExtendedOptions { recompute: Recompute::Full, sequence_parallel: true, ..sc.options };
    let want = LaunchScenario { layout, options, ..sc.clone() };
    let out =
        emit(Target::MaxText, Some(Input { text: cmd, launch: &l, name: Some("run.sh") }), &sc, &layout, &options)
            .unwrap();
    assert!(out.in_place);
    let (_, back) = scenario(&out.text, &out.file_name);
    assert_eq!(facts(&back), facts(&want), "{}\n{:?}", out.text, out.notes);
    let (gone, new) = changed(cmd, &out.text);
    for line in gone.iter().chain(&new) {
        assert!(
            line.contains("parallelism=")
                || line.contains("batch_size=")
                || line.contains("remat_policy=")
                || line.contains("gradient_accumulation_steps="),
            "{line:?}\n{}",
            out.text
        );
    }
    assert!(out.text.contains("    dataset_type=synthetic\n"), "{}", out.text);
}

/// The page's "copy as Megatron flags": every flag, and a command made of them reads back.
#[test]
fn megatron_flags_read_back() {
    let name = "nemo-llama3-8b.yaml";
    let (_, sc) = scenario(&example(name), name);
    let f = fmperf_launch::emit::megatron_flags(&sc, &sc.layout, &sc.options).unwrap();
    assert!(f.text.starts_with("--num-layers 32 \\\n--hidden-size 4096 \\\n"), "{}", f.text);
    let cmd = format!("# fmperf: system=nvidia_h100_sxm5_80gb gpus=16\npython pretrain_gpt.py \\\n{}", f.text);
    let (_, back) = scenario(&cmd, "run.sh");
    assert_eq!(facts(&back), facts(&sc));
}

/// Inputs that do not match their reading (edited text, junk) give an error or a file, never a panic.
#[test]
fn mismatched_and_hostile_inputs_do_not_panic() {
    let name = "megatron-llama3-70b.sh";
    let text = example(name);
    let (l, sc) = scenario(&text, name);
    let y = Layout::placed(4, 1, 8, 2, 1, 128, 1);
    let junk: String = (0..20_000u32).map(|i| char::from_u32(i % 0x2FF + 1).unwrap_or('x')).collect();
    let long = "--tensor-model-parallel-size ".repeat(50_000);
    for t in ["", "\n\n\n", junk.as_str(), long.as_str(), "TP=\n--tensor-model-parallel-size $TP\n"] {
        for target in Target::ALL {
            let _ = emit(target, Some(Input { text: t, launch: &l, name: None }), &sc, &y, &sc.options);
        }
    }
}

/// The way the CLI uses it: the best configurations of a search (`fmperf search --from`), each
/// written in place and read back with its layout and its time per step.
#[test]
fn search_results_round_trip() {
    use fmperf_core::Strategy;
    use fmperf_core::cost::ExtendedSetup;
    use fmperf_core::search::{ExecutionChoices, Search};
    for (name, target) in [("nemo-llama3-8b.yaml", Target::Nemo), ("torchtitan-llama3-8b.toml", Target::Torchtitan)] {
        let text = example(name);
        let (l, sc) = scenario(&text, name);
        let (_, hw, _) = hardware(
            sc.system.as_deref().unwrap(),
            sc.options.hardware.precision,
            sc.options.hardware.measured_ceiling,
        )
        .unwrap();
        let mut searched = sc.options;
        searched.moe.ep = None;
        searched.moe.etp = None;
        let setup = ExtendedSetup { workload: sc.workload, hardware: hw.clone(), options: searched };
        let spec = setup.spec(Strategy::OneD, sc.devices, sc.layout.global_batch, 40);
        let result =
            Search::in_mode(spec, Some(setup.clone()), ExecutionChoices::fixed(&setup.options)).unwrap().finish();
        // The rows each target expresses exactly (NeMo 1: replicated, Megatron-Core's distributed
        // optimizer or Apex's ZeRO-2; torchtitan: FSDP or DDP, its own recomputation levels, SP
        // with TP).
        let exact = |o: &ExtendedOptions| match target {
            Target::Nemo => {
                matches!(o.sharding, Sharding::Ddp | Sharding::Zero1 | Sharding::Zero2) && o.shard_group.is_none()
            }
            _ => matches!(o.sharding, Sharding::Ddp | Sharding::Zero3) && o.recompute != Recompute::Selective,
        };
        let mut n = 0;
        for r in &result.top {
            let (layout, mut options) = fmperf_launch::emit::choice(r, sc.layout.global_batch, &sc.options).unwrap();
            if target == Target::Torchtitan {
                options.sequence_parallel = layout.tp > 1;
            }
            if !exact(&options) || n == 5 {
                continue;
            }
            n += 1;
            let want = LaunchScenario { layout, options, ..sc.clone() };
            let out = emit(target, Some(Input { text: &text, launch: &l, name: Some(name) }), &sc, &layout, &options)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let (_, back) = scenario(&out.text, &out.file_name);
            assert_eq!(facts(&back), facts(&want), "{name}\n{}\n{:?}", out.text, out.notes);
            let (t0, t1) = (time(&want), time(&back));
            assert!((t1 / t0 - 1.0).abs() < 1e-3, "{name}: {t0} s, read back {t1} s\n{}", out.text);
        }
        assert!(n > 0, "{name}: no search result to write");
    }
}

//! Constructs met in the second held-out set of real launch files (`data/real/` cases 63–79,
//! collected 2026-11-27), written here as small snippets in the style of those files: a MaxText
//! command passed as one string to another command (`xpk workload create --command="…"`,
//! `bash -c "…"`), BigCode's `--attention-head-type multiquery`, DeepSpeed's BF16 optimizer at
//! ZeRO stage 0, and tokenizers whose model generations differ.

use fmperf_core::extended::Sharding;
use fmperf_launch::{Format, Source, parse, parse_files};

fn read(text: &str) -> fmperf_launch::Launch {
    parse(text, None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn a_maxtext_command_inside_an_xpk_command_string_is_read() {
    let text = r#"#!/bin/bash
export BASE_OUTPUT_DIR="gs://bucket"
MAXTEXT_ARGS="\
model_name=llama3.1-70b \
per_device_batch_size=2 \
ici_fsdp_parallelism=-1 \
max_target_length=8192 \
steps=30 \
base_output_directory=${BASE_OUTPUT_DIR}"

xpk workload create \
  --cluster=$CLUSTER_NAME \
  --device-type=tpu7x-4x4x4 \
  --num-slices=1 \
  --command="set -e && export LIBTPU_INIT_ARGS='${XLA_FLAGS}' && \
python3 -m MaxText.train MaxText/configs/base.yml ${MAXTEXT_ARGS} 2>&1 | tee train.log && \
gsutil cp train.log ${BASE_OUTPUT_DIR}/logs/"
"#;
    let l = read(text);
    assert_eq!(l.format, Format::MaxText);
    let s = &l.settings;
    assert_eq!(s.mbs.copied(), Some(2));
    assert_eq!(s.seq_len.copied(), Some(8192));
    assert_eq!(s.layers.copied(), Some(80), "llama3.1-70b by name");
    // The words after the MaxText command (`| tee …`, `&& gsutil …`) are not its keys.
    assert!(!l.unused.iter().any(|u| u.key.contains("gsutil") || u.key == "tee"), "{:?}", l.unused);
    assert!(l.unused.iter().any(|u| u.key == "steps"));
}

#[test]
fn a_maxtext_command_inside_bash_c_is_read() {
    let l = read(
        "ARGS=\"per_device_batch_size=3 max_target_length=1024\"\n\
         srun bash -c \"python3 -m MaxText.train MaxText/configs/base.yml model_name=llama2-7b $ARGS; echo done\"\n",
    );
    assert_eq!((l.settings.mbs.copied(), l.settings.seq_len.copied()), (Some(3), Some(1024)));
    assert!(!l.unused.iter().any(|u| u.key == "echo" || u.key == "done"), "{:?}", l.unused);
}

#[test]
fn a_command_string_without_maxtext_is_still_refused() {
    let e = parse("ARGS=\"per_device_batch_size=3\"\nbash -c \"python3 other.py $ARGS\"\n", None);
    // Either not MaxText or a MaxText error; never a silent read of base.yml's defaults as the
    // file's values.
    if let Ok(l) = e {
        assert_ne!(l.settings.mbs.copied(), Some(12));
    }
}

#[test]
fn bigcode_multiquery_attention_has_one_kv_head() {
    let script = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 \
                  --num-attention-heads 16 --attention-head-type multiquery --seq-length 2048 \
                  --micro-batch-size 2 --global-batch-size 192 --vocab-size 49152 --fp16\n";
    let l = read(script);
    assert_eq!(l.settings.kv_heads.copied(), Some(1));
    assert_eq!(l.settings.kv_heads.origin.as_ref().map(|o| o.key.as_str()), Some("--attention-head-type"));
    assert!(!l.unused.iter().any(|u| u.key == "--attention-head-type"));
    let l = read(&script.replace("multiquery", "multihead"));
    assert_ne!(l.settings.kv_heads.copied(), Some(1));
    let e = parse(&script.replace("multiquery", "grouped"), None).unwrap_err();
    assert_eq!(e.field(), Some("--attention-head-type"));
}

#[test]
fn a_megatron_deepspeed_script_with_a_bf16_stage_0_json_agrees() {
    let script = "deepspeed pretrain_gpt.py --num-layers 2 --hidden-size 256 --num-attention-heads 4 \
                  --seq-length 128 --micro-batch-size 1 --global-batch-size 8 --vocab-size 1000 \
                  --tensor-model-parallel-size 1 --bf16 --zero-stage 0 --deepspeed --deepspeed_config ds.json\n";
    let json = r#"{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
  "zero_optimization": {"stage": 0}, "bf16": {"enabled": true}}"#;
    let l = parse_files(
        &[Source { name: Some("run.sh"), text: script }, Source { name: Some("ds.json"), text: json }],
        &[],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero1));
    assert_eq!(l.settings.fp32_grad_accumulation.copied(), Some(true));
}

#[test]
fn maxtext_sharding_variants_of_a_model_file_keep_its_shape() {
    use fmperf_launch::maxtext::models::find;
    let base = find("deepseek3-671b").expect("known");
    for v in ["deepseek3-671b-2dfsdp", "DeepSeek3-671B-batchsplit"] {
        let m = find(v).unwrap_or_else(|| panic!("{v} not known"));
        assert_eq!((m.layers, m.hidden, m.vocab, m.moe), (base.layers, base.hidden, base.vocab, base.moe));
    }
    assert!(find("deepseek3-671b-unknown").is_none());
}

/// A parallel degree the reader does not know is refused by name (the device split would be
/// wrong); DeepSpeed-Ulysses's degree divides the devices as context parallelism does.
#[test]
fn unknown_parallel_degrees_are_refused_and_ulysses_is_context_parallel() {
    let base = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 256 --num-attention-heads 8 \
                --seq-length 4096 --micro-batch-size 1 --vocab-size 1000";
    let e = fmperf_launch::parse(&format!("{base} --foo-model-parallel-size 2"), None).unwrap_err();
    assert_eq!(e.field(), Some("--foo-model-parallel-size"), "{e}");
    // Degree 1 changes nothing: listed as unused.
    assert!(fmperf_launch::parse(&format!("{base} --foo-model-parallel-size 1"), None).is_ok());
    let l = fmperf_launch::parse(&format!("{base} --ds-sequence-parallel-size 4"), None).unwrap();
    assert_eq!(l.settings.cp.copied(), Some(4));
    let sc = fmperf_launch::LaunchScenario::from_launch(&l, &fmperf_launch::Overrides::default()).unwrap();
    assert_eq!((sc.layout.cp, sc.layout.dp), (4, 2));
    assert_eq!(sc.options.cp_comm, fmperf_core::extended::context_parallel::CpComm::Ulysses);
}

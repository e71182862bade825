//! DeepSpeed JSON read alone and with the launch that names it (`parse_files`), and on hostile
//! input.

use fmperf_core::catalog::Precision;
use fmperf_core::extended::Sharding;
use fmperf_launch::{Format, Source, detect, parse, parse_files};

const DS: &str = r#"{
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": { "device": "cpu", "pin_memory": true },
    "stage3_prefetch_bucket_size": "auto"
  },
  "bf16": { "enabled": true },
  "optimizer": { "type": "AdamW", "params": { "lr": "auto" } },
  "wandb": { "enabled": false }
}"#;

#[test]
fn auto_values_are_left_to_the_launch() {
    assert_eq!(detect(DS, Some("ds_config.json")).unwrap(), Format::DeepSpeed);
    let l = parse(DS, Some("ds_config.json")).unwrap();
    let s = &l.settings;
    assert!(s.global_batch.get().is_none() && s.mbs.get().is_none() && s.grad_accumulation.get().is_none());
    assert_eq!(s.sharding.copied(), Some(Sharding::Zero3));
    assert_eq!(s.precision.copied(), Some(Precision::Bf16));
    assert_eq!(l.notes.iter().filter(|n| n.contains("\"auto\"")).count(), 3, "{:?}", l.notes);
    let offload = l.unused.iter().find(|u| u.key == "zero_optimization.offload_optimizer").unwrap();
    assert!(offload.why.contains("not modelled"), "{}", offload.why);
    for k in ["optimizer", "wandb", "zero_optimization.stage3_prefetch_bucket_size"] {
        assert!(l.unused.iter().any(|u| u.key == k), "{k}");
    }
}

#[test]
fn a_launch_with_its_ds_config() {
    let script = "deepspeed pretrain_gpt.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 \
                  --seq-length 2048 --vocab-size 50304 --micro-batch-size 4 --global-batch-size 64 --bf16 \
                  --deepspeed --deepspeed_config ds.json\n# fmperf: gpus=16\n";
    let ds = "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 4, \"zero_optimization\": {\"stage\": 1}, \"bf16\": {\"enabled\": true}}";
    let l =
        parse_files(&[Source { name: Some("run.sh"), text: script }, Source { name: Some("ds.json"), text: ds }], &[])
            .unwrap();
    assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero1));
    assert_eq!(l.settings.sharding.origin.as_ref().and_then(|o| o.file.as_deref()), Some("ds.json"));
    // A batch that contradicts the launch is refused naming both files.
    let ds2 = "{\"train_batch_size\": 128}";
    let e =
        parse_files(&[Source { name: Some("run.sh"), text: script }, Source { name: Some("ds.json"), text: ds2 }], &[])
            .unwrap_err();
    assert!(e.to_string().contains("ds.json"), "{e}");
}

#[test]
fn malformed_configs_name_the_key() {
    let e = parse(
        "{\n \"train_batch_size\": 8,\n \"zero_optimization\": {\"stage\": 1},\n \"train_batch_size\": 16\n}",
        Some("ds.json"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("\"train_batch_size\" is given twice"), "{e}");
    let e = parse("{\n \"train_batch_size\": CONFIG_BATCH_SIZE,\n \"zero_optimization\": {}\n}", Some("ds.json"))
        .unwrap_err();
    assert!(e.to_string().contains("line 2") && e.to_string().contains("CONFIG_BATCH_SIZE"), "{e}");
    let e = parse("{\"train_micro_batch_size_per_gpu\": 0}", Some("ds.json")).unwrap_err();
    assert_eq!(e.field(), Some("train_micro_batch_size_per_gpu"));
    let e = parse("{\"zero_optimization\": {\"stage\": \"3\"}}", Some("ds.json")).unwrap_err();
    assert_eq!(e.field(), Some("zero_optimization.stage"));
}

#[test]
fn hostile_json_is_bounded() {
    let deep = format!("{{\"zero_optimization\": {}{}}}", "[".repeat(200_000), "]".repeat(200_000));
    assert!(parse(&deep, Some("ds.json")).is_err());
    let big = format!("{{\"train_batch_size\": 8, \"x\": \"{}\"}}", "a".repeat(10 << 20));
    assert!(parse(&big, Some("ds.json")).is_ok());
    let junk: String = (0..50_000u32).map(|i| char::from_u32(i % 0x2FF + 1).unwrap_or('x')).collect();
    assert!(parse(&format!("{{\"train_batch_size\": {junk}"), Some("ds.json")).is_err());
}

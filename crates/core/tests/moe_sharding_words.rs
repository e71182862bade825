//! An MoE row's sharding is read as a dense row's ([`read_sharding`]): FSDP and HSDP words with
//! their shard group, Megatron-FSDP's sharding strategy, a stated ZeRO stage, the distributed
//! optimizer among the parallel words, and `parallel.fsdp` given as a flag or a number.

use fmperf_core::extended::{Sharding, Stack};
use fmperf_core::validate::moe_runs::{MOE_RUNS_JSON, interpret_moe_row};
use fmperf_core::validate::sharding_words::{ShardingInput, read_sharding};
use serde_json::{Value, json};

/// Mixtral 8x7B on 64 H100 (Megatron-LM): tp 1, pp 4, dp 16, ep 8, no sharding words.
fn mixtral() -> Value {
    let doc: Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    doc["rows"].as_array().unwrap().iter().find(|r| r["id"] == "mlm_mixtral8x7b_h100_bf16_64").cloned().unwrap()
}

/// The row with `parallel.<key>` set to `value`: its sharding, shard group and stack.
fn read_with(key: &str, value: Value) -> (Sharding, Option<u64>, Stack) {
    read_with_all(&[(key, value)])
}

/// The row with each `parallel.<key>` set to its value.
fn read_with_all(fields: &[(&str, Value)]) -> (Sharding, Option<u64>, Stack) {
    let mut row = mixtral();
    for (key, value) in fields {
        row["parallel"][*key] = value.clone();
    }
    let s = interpret_moe_row(&row).unwrap();
    (s.options.sharding, s.options.shard_group, s.options.stack)
}

#[test]
fn moe_rows_read_their_sharding_as_dense_rows_do() {
    // Nothing stated: the distributed optimizer (ZeRO-1), and no note for it on an MoE row.
    let s = interpret_moe_row(&mixtral()).unwrap();
    assert_eq!((s.options.sharding, s.options.shard_group), (Sharding::Zero1, None));
    assert!(!s.notes.iter().any(|n| n.contains("ZeRO stage not stated")), "{:?}", s.notes);
    // Megatron-FSDP's strategies: optim_grads_params = ZeRO-3 on the Megatron stack, optim_grads
    // = ZeRO-2 (it was ZeRO-3 when any "fsdp" meant ZeRO-3).
    assert_eq!(
        read_with("fsdp", json!("Megatron-FSDP (optim_grads_params)")),
        (Sharding::Zero3, None, Stack::Megatron)
    );
    assert_eq!(read_with("fsdp", json!("Megatron-FSDP (optim_grads)")).0, Sharding::Zero2);
    // PyTorch's FSDP without the Megatron name: ZeRO-3 on the fsdp stack; NO_SHARD: plain DP.
    assert_eq!(read_with("fsdp", json!("PyTorch FSDP2")), (Sharding::Zero3, None, Stack::Fsdp));
    assert_eq!(read_with("fsdp", json!("FSDP NO_SHARD")).0, Sharding::Ddp);
    // HSDP: shard 8, replicate 2 over dp·cp = 16 · 1: ZeRO-3 within groups of 8 (the shard group
    // was dropped before).
    assert_eq!(read_with("fsdp", json!("HSDP: shard 8, replicate 2")), (Sharding::Zero3, Some(8), Stack::Fsdp));
    // A flag, a number: true is FSDP; 0 (NeMo's tables) is off, the ZeRO-1 default; 8 is FSDP
    // over 8 ranks, a group of 8 of the 16.
    assert_eq!(read_with("fsdp", json!(true)).0, Sharding::Zero3);
    assert_eq!(read_with("fsdp", json!(0)).0, Sharding::Zero1);
    assert_eq!(read_with("fsdp", json!(8)), (Sharding::Zero3, Some(8), Stack::Fsdp));
    // A stated ZeRO stage (DeepSpeed's), read as the dense rows read it.
    assert_eq!(read_with("zero_stage", json!(2)).0, Sharding::Zero2);
    assert_eq!(read_with("zero_stage", json!(0)).0, Sharding::Ddp);
    assert_eq!(read_with("zero_stage", json!("ZeRO-3")).0, Sharding::Zero3);
    // A stage that is none of 0-3 is an error naming the field, never read as unstated.
    let mut row = mixtral();
    row["parallel"]["zero_stage"] = json!("ZeRO-Infinity");
    let why = interpret_moe_row(&row).unwrap_err().to_string();
    assert!(why.contains("parallel.zero_stage"), "{why}");
    // No distributed optimizer and no FSDP, both stated: plain data parallelism; the optimizer
    // stated off alone leaves the default.
    let off = [("distributed_optimizer", json!(false)), ("fsdp", json!(false))];
    assert_eq!(read_with_all(&off).0, Sharding::Ddp);
    assert_eq!(read_with("distributed_optimizer", json!(false)).0, Sharding::Zero1);
    // Megatron's flag among the other parallel words.
    let (sharding, _, _) = read_with("other", json!("--use-distributed-optimizer True --optimizer muon"));
    assert_eq!(sharding, Sharding::Zero1);
}

#[test]
fn the_shared_reader_gives_the_same_reading_for_the_same_words() {
    // The words of a shipped MaxText row, read directly and through an MoE row: the same.
    let direct = read_sharding(&ShardingInput {
        fsdp: Some("ici_fsdp_parallelism=32 x ici_tensor_parallelism=4"),
        dp: 32,
        cp: 1,
        ..ShardingInput::default()
    });
    assert_eq!((direct.sharding, direct.shard_group), (Sharding::Zero3, None));
    let (sharding, group, _) = read_with("fsdp", json!("ici_fsdp_parallelism=8 x ici_tensor_parallelism=1"));
    // dp 16: an FSDP axis of 8 is a group of 8 (the other 2 replicate).
    assert_eq!((sharding, group), (Sharding::Zero3, Some(8)));
}

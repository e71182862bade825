//! The Megatron reader on Hugging Face Trainer launches, underscore spellings, launchers'
//! device counts and the vocabulary of named tokenizers (snippets written for these tests after
//! the patterns of public scripts).

use fmperf_core::catalog::Precision;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_launch::megatron::{parse, parse_args};

#[test]
fn a_trainer_launch_reads_batch_precision_recompute_and_length() {
    let s = r#"
deepspeed --num_gpus 8 --num_nodes 2 --master_port 29500 train.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --data_path data.json \
    --bf16 True \
    --output_dir out \
    --num_train_epochs 3 \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 8 \
    --learning_rate 2e-5 \
    --model_max_length 4096 \
    --gradient_checkpointing True \
    --deepspeed ds_config.json \
    --tf32 True --lora_r 8
"#;
    let l = parse(s).unwrap();
    let st = &l.settings;
    assert_eq!((st.mbs.copied(), st.grad_accumulation.copied(), st.seq_len.copied()), (Some(4), Some(8), Some(4096)));
    assert_eq!((st.devices_per_node.copied(), st.nodes.copied()), (Some(8), Some(2)));
    assert_eq!((st.tp.copied(), st.pp.copied()), (Some(1), Some(1)));
    assert_eq!(st.precision.copied(), Some(Precision::Bf16));
    assert_eq!(st.recompute.copied(), Some(Recompute::Full));
    assert_eq!(st.model_name.get().map(String::as_str), Some("meta-llama/Llama-2-7b-hf"));
    assert!(st.layers.get().is_none() && st.vocab.get().is_none(), "a model name alone gives no shape");
    assert!(l.notes.iter().any(|n| n.contains("data parallel over every device")), "{:?}", l.notes);
    let ds = l.unused.iter().find(|u| u.key == "--deepspeed").expect("--deepspeed listed");
    assert!(ds.why.contains("second --from"), "{}", ds.why);
    assert!(l.unused.iter().any(|u| u.key == "--lora_r" && u.why.contains("LoRA")));
    // FSDP through the Trainer, accelerate's process count, and switches written `False`.
    let s = "accelerate launch --num_processes 16 --num_machines 2 train.py --model_name_or_path m \
             --per_device_train_batch_size 2 --fsdp \"full_shard auto_wrap\" --fp16 True --gradient_checkpointing False";
    let l = parse(s).unwrap();
    assert_eq!((l.settings.devices.copied(), l.settings.nodes.copied()), (Some(16), Some(2)));
    assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero3));
    assert_eq!(l.settings.precision.copied(), Some(Precision::Fp16));
    assert_eq!(l.settings.recompute.copied(), Some(Recompute::None));
    // accelerate's own precision and ZeRO stage.
    let l = parse("accelerate launch --mixed_precision bf16 --use_deepspeed --zero_stage 2 train.py --per_device_train_batch_size 1").unwrap();
    assert_eq!(
        (l.settings.precision.copied(), l.settings.sharding.copied()),
        (Some(Precision::Bf16), Some(Sharding::Zero2))
    );
    let e = parse("torchrun train.py --per_device_train_batch_size 1 --fsdp sometimes").unwrap_err();
    assert_eq!(e.field(), Some("--fsdp"));
}

#[test]
fn underscore_spellings_and_launcher_counts() {
    let s = "torchrun --nproc-per-node=8 --nnodes=1 pretrain_gpt.py --tensor_model_parallel_size 2 \
             --pipeline_model_parallel_size=4 --num_layers 1_024 --hidden-size 64 --num_attention_heads 4 \
             --micro_batch_size 1 --global_batch_size 64 --use_distributed_optimizer --bf16 --vocab_size 32000";
    let l = parse(s).unwrap();
    let st = &l.settings;
    assert_eq!((st.tp.copied(), st.pp.copied(), st.layers.copied()), (Some(2), Some(4), Some(1024)));
    assert_eq!(st.sharding.copied(), Some(Sharding::Zero1));
    assert_eq!(st.tp.origin.as_ref().map(|o| o.key.as_str()), Some("--tensor_model_parallel_size"));
    // A count the job computes is listed with a note, not an error; `--gpus` gives it.
    let l = parse("torchrun --nproc_per_node $(nvidia-smi -L | wc -l) pretrain_gpt.py --num-layers 2").unwrap();
    assert!(l.settings.devices_per_node.get().is_none());
    assert!(l.notes.iter().any(|n| n.contains("--gpus")), "{:?}", l.notes);
    // Slurm's GPU count from `#SBATCH --gpus-per-node` reaches `$SLURM_GPUS_PER_NODE`.
    let l = parse("#SBATCH --gpus-per-node=4\n#SBATCH --nodes 2\nsrun python pretrain_gpt.py --tensor-model-parallel-size $SLURM_GPUS_PER_NODE --num-layers 2").unwrap();
    assert_eq!((l.settings.tp.copied(), l.settings.devices_per_node.copied()), (Some(4), Some(4)));
    // `mpirun -np` counts every device.
    let l = parse("mpirun -np 16 python pretrain_gpt.py --num-layers 2").unwrap();
    assert_eq!(l.settings.devices.copied(), Some(16));
}

#[test]
fn vocabulary_from_named_tokenizers() {
    let v = |flags: &str| {
        parse(&format!("python pretrain_gpt.py --num-layers 2 {flags}")).map(|l| l.settings.vocab.copied())
    };
    assert_eq!(v("--tokenizer-type GPT2BPETokenizer --vocab-file /d/v.json").unwrap(), Some(50_257));
    assert_eq!(v("--vocab-file /data/gpt2-vocab.json --merge-file m.txt").unwrap(), Some(50_257));
    assert_eq!(v("--tokenizer-type BertWordPieceLowerCase").unwrap(), Some(30_522));
    assert_eq!(v("--tokenizer-type HuggingFaceTokenizer --tokenizer-model Qwen/Qwen2.5-7B").unwrap(), Some(151_665));
    assert_eq!(
        v("--tokenizer-type HuggingFaceTokenizer --tokenizer-model /ckpt/Meta-Llama-3.1-8B").unwrap(),
        Some(128_256)
    );
    assert_eq!(
        v("--tokenizer-type HuggingFaceTokenizer --tokenizer-model deepseek-ai/DeepSeek-V3").unwrap(),
        Some(129_280)
    );
    assert_eq!(v("--tokenizer-type Llama2Tokenizer --tokenizer-model /t/tokenizer.model").unwrap(), Some(32_000));
    assert_eq!(v("--tokenizer-type TikTokenizer --tiktoken-pattern v2").unwrap(), Some(131_072));
    // NullTokenizer: `--vocab-size` plus Megatron's end-of-document token.
    assert_eq!(v("--tokenizer-type NullTokenizer --vocab-size 128256").unwrap(), Some(128_257));
    // `--vocab-size` wins over the tokenizer's name.
    assert_eq!(v("--tokenizer-type GPT2BPETokenizer --vocab-size 1000").unwrap(), Some(1000));
    // An unknown tokenizer: no vocabulary (never a guess), and a note naming the flag and asking for
    // --vocab-size (the estimate then leaves the embedding and head out, and says so).
    assert_eq!(v("--tokenizer-type HuggingFaceTokenizer --tokenizer-model /data/my_tok").unwrap(), None);
    let l =
        parse("python pretrain_gpt.py --tokenizer-type HuggingFaceTokenizer --tokenizer-model /data/my_tok").unwrap();
    assert!(
        l.notes.iter().any(|n| n.contains("--tokenizer-model /data/my_tok") && n.contains("--vocab-size")),
        "{:?}",
        l.notes
    );
    let l = parse("python pretrain_gpt.py --num-layers 2 --tokenizer-type GPT2BPETokenizer").unwrap();
    assert!(l.notes.iter().any(|n| n.contains("50257") && n.contains("GPT-2")), "{:?}", l.notes);
}

#[test]
fn a_sourced_file_of_flag_arrays_is_read_as_flags() {
    let model = "MODEL_ARGS=(\n  --num-layers 94 # depth\n  --hidden-size 4096\n  --num-attention-heads 64\n)\nMOE=(--num-experts 128 --moe-router-topk 8)\n";
    let l = parse_args(model, &[]).unwrap();
    assert_eq!((l.settings.layers.copied(), l.settings.moe.experts.copied()), (Some(94), Some(128)));
    assert!(l.settings.recompute.get().is_none(), "no run defaults for a sourced file");
    assert!(l.notes.iter().any(|n| n.contains("MODEL_ARGS")), "{:?}", l.notes);
}

//! The MaxText reader on command lines, config YAMLs and model files written as people write
//! them (snippets in the style of MaxText's `configs/` scripts), and on hostile input.

use fmperf_core::catalog::Precision;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_launch::{Format, LaunchScenario, Overrides, Source, detect, parse, parse_files};

fn read(text: &str) -> fmperf_launch::Launch {
    parse(text, None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn a_command_line_with_its_mesh_becomes_a_scenario() {
    let l = read(
        "python3 -m MaxText.train MaxText/configs/base.yml run_name=x model_name=llama2-7b \\\n  per_device_batch_size=4 ici_fsdp_parallelism=8 dcn_data_parallelism=2 remat_policy=full \\\n  max_target_length=4096 steps=10 attention=flash\n",
    );
    assert_eq!(l.format, Format::MaxText);
    let s = &l.settings;
    assert_eq!((s.tp.copied(), s.pp.copied(), s.cp.copied(), s.dp.copied()), (Some(1), Some(1), Some(1), Some(16)));
    assert_eq!((s.devices.copied(), s.mbs.copied(), s.global_batch.copied()), (Some(16), Some(4), Some(64)));
    assert_eq!((s.layers.copied(), s.hidden.copied(), s.vocab.copied()), (Some(32), Some(4096), Some(32000)));
    assert_eq!(s.seq_len.copied(), Some(4096));
    assert_eq!(s.sharding.copied(), Some(Sharding::Zero3));
    assert_eq!(s.recompute.copied(), Some(Recompute::Full));
    assert_eq!(s.mbs.origin.as_ref().map(|o| (o.key.as_str(), o.line)), Some(("per_device_batch_size", 2)));
    let keys: Vec<&str> = l.unused.iter().map(|u| u.key.as_str()).collect();
    for k in ["config", "run_name", "steps", "attention"] {
        assert!(keys.contains(&k), "{k} not listed: {keys:?}");
    }
    assert!(l.notes.iter().any(|n| n.contains("hybrid sharding")), "{:?}", l.notes);
    let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    assert_eq!((sc.devices, sc.layout.global_batch, sc.layout.mbs), (16, 64, 4));
}

#[test]
fn tensor_axes_and_fractional_batches() {
    let l = read(
        "python3 MaxText/train.py MaxText/configs/base.yml model_name=llama3-8b ici_tensor_parallelism=4 \
         ici_fsdp_parallelism=2 dcn_data_parallelism=1 per_device_batch_size=0.5 dtype=bfloat16 quantization=fp8",
    );
    let s = &l.settings;
    assert_eq!((s.tp.copied(), s.dp.copied(), s.devices.copied()), (Some(4), Some(2), Some(8)));
    // 0.5 sequences per device × 4 devices per data-parallel rank.
    assert_eq!((s.mbs.copied(), s.global_batch.copied()), (Some(2), Some(4)));
    assert_eq!(s.precision.copied(), Some(Precision::Fp8));
    // Pure FSDP with half a sequence per device has no whole micro-batch.
    let e = parse(
        "python3 -m MaxText.train base.yml ici_fsdp_parallelism=8 dcn_data_parallelism=1 per_device_batch_size=0.5",
        None,
    )
    .unwrap_err();
    assert_eq!(e.field(), Some("per_device_batch_size"));
}

#[test]
fn minus_one_degrees() {
    // base.yml's defaults (fsdp and dcn data -1) leave the data-parallel degree to --gpus.
    let l = read("python3 -m MaxText.train base.yml model_name=mixtral-8x7b per_device_batch_size=2");
    let s = &l.settings;
    assert_eq!((s.dp.copied(), s.devices.copied(), s.global_batch.copied()), (None, None, None));
    assert_eq!((s.mbs.copied(), s.sharding.copied()), (Some(2), Some(Sharding::Zero3)));
    assert!(s.moe.is_moe());
    let sc = LaunchScenario::from_launch(&l, &Overrides { gpus: Some(32), ..Overrides::default() }).unwrap();
    assert_eq!(sc.layout.global_batch, 64);
    // A -1 on a model-parallel axis needs the device count…
    let e =
        parse("python3 -m MaxText.train base.yml ici_tensor_parallelism=-1 ici_fsdp_parallelism=1", None).unwrap_err();
    assert_eq!(e.field(), Some("ici_tensor_parallelism"));
    // … which a directive gives.
    let l = read(
        "# fmperf: gpus=8\npython3 -m MaxText.train base.yml ici_tensor_parallelism=-1 ici_fsdp_parallelism=1 \
         dcn_data_parallelism=1 per_device_batch_size=1",
    );
    assert_eq!((l.settings.tp.copied(), l.settings.dp.copied(), l.settings.mbs.copied()), (Some(8), Some(1), Some(8)));
    let e = parse("python3 -m MaxText.train base.yml ici_fsdp_parallelism=0", None).unwrap_err();
    assert_eq!(e.field(), Some("ici_fsdp_parallelism"));
}

#[test]
fn pipeline_micro_batches_and_experts() {
    let l = read(
        "python3 -m MaxText.train base.yml model_name=llama2-70b ici_pipeline_parallelism=4 ici_fsdp_parallelism=2 \
         dcn_data_parallelism=1 per_device_batch_size=2 num_pipeline_microbatches=8 remat_policy=save_qkv_proj",
    );
    let s = &l.settings;
    assert_eq!((s.pp.copied(), s.dp.copied(), s.devices.copied()), (Some(4), Some(2), Some(8)));
    assert_eq!((s.mbs.copied(), s.grad_accumulation.copied(), s.global_batch.copied()), (Some(1), Some(8), Some(16)));
    // `save_qkv_proj` keeps the Q/K/V projections and recomputes the rest of the forward's matmul
    // work (11.5 of 13 units, 88 %): the partial level at 0.885, as validation reads the same words.
    assert_eq!(s.recompute.copied(), Some(Recompute::of_share(0.885)));
    assert!(l.notes.iter().any(|n| n.contains("save_qkv_proj") && n.contains("88 %")));
    LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
    let l = read(
        "python3 -m MaxText.train base.yml model_name=mixtral-8x7b ici_expert_parallelism=8 ici_fsdp_parallelism=1 \
         dcn_data_parallelism=1 per_device_batch_size=1",
    );
    assert_eq!((l.settings.moe.ep.copied(), l.settings.dp.copied()), (Some(8), Some(8)));
    assert_eq!(l.settings.sharding.copied(), Some(Sharding::Ddp));
    LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
}

#[test]
fn model_names_and_model_files() {
    let e = parse("python3 -m MaxText.train base.yml model_name=llama9-1t ici_fsdp_parallelism=8", None).unwrap_err();
    assert_eq!(e.field(), Some("model_name"));
    let l = read(
        "base_emb_dim: 7168\nbase_num_query_heads: 128\nbase_num_kv_heads: 128\nbase_mlp_dim: 18432\nbase_moe_mlp_dim: 2048\nbase_num_decoder_layers: 61\nfirst_num_dense_layers: 3\nmlp_activations: [\"silu\",\"linear\"]\nvocab_size: 129280\nnum_experts: 256\nnum_experts_per_tok: 8\nshared_experts: 1\nattention_type: mla\nq_lora_rank: 1536\nkv_lora_rank: 512\nqk_nope_head_dim: 128\nqk_rope_head_dim: 64\nv_head_dim: 128\ndecoder_block: \"deepseek\"\n",
    );
    let s = &l.settings;
    assert_eq!(
        (s.layers.copied(), s.moe.experts.copied(), s.moe.first_dense_layers.copied()),
        (Some(61), Some(256), Some(3))
    );
    assert_eq!((s.moe.mla.copied(), s.moe.kv_lora_rank.copied()), (Some(true), Some(512)));
    // A model file alone: no batch defaults, no layout.
    assert!(s.mbs.get().is_none() && s.tp.get().is_none());
    // The gemma2 model files count a local and a global block as one layer.
    let l = read(
        "base_emb_dim: 2304\nbase_num_query_heads: 8\nbase_num_kv_heads: 4\nbase_mlp_dim: 9216\nbase_num_decoder_layers: 13\nhead_dim: 256\nvocab_size: 256128\ndecoder_block: \"gemma2\"\n",
    );
    assert_eq!(l.settings.layers.copied(), Some(26));
}

#[test]
fn config_model_file_and_command_line_in_maxtexts_order() {
    let script = "export EXE=train\npython3 -m maxtext.trainers.pre_train.$EXE configs/gpu/models/llama2_7b.yml \\\n  run_name=$RUN_NAME dcn_data_parallelism=2 ici_fsdp_parallelism=8 max_target_length=8192\n";
    let config = "base_config: \"base.yml\"\nhardware: \"gpu\"\nmodel_name: \"llama2-7b\"\nper_device_batch_size: 4\nmax_target_length: 4096\n";
    let model = "base_emb_dim: 4096\nbase_num_query_heads: 32\nbase_num_kv_heads: 32\nbase_mlp_dim: 11008\nbase_num_decoder_layers: 32\nhead_dim: 128\nmlp_activations: [\"silu\",\"linear\"]\nvocab_size: 32000\n";
    for name in ["run.sh", "llama2_7b.yml", "llama2-7b.yml"] {
        assert_eq!(
            detect(
                if name == "run.sh" {
                    script
                } else if name == "llama2_7b.yml" {
                    config
                } else {
                    model
                },
                Some(name)
            )
            .unwrap(),
            Format::MaxText
        );
    }
    let src = [
        Source { name: Some("run.sh"), text: script },
        Source { name: Some("llama2_7b.yml"), text: config },
        Source { name: Some("llama2-7b.yml"), text: model },
    ];
    let l = parse_files(&src, &["RUN_NAME=r1".to_string()]).unwrap();
    let s = &l.settings;
    assert_eq!((s.seq_len.copied(), s.mbs.copied(), s.global_batch.copied()), (Some(8192), Some(4), Some(64)));
    assert_eq!(s.seq_len.origin.as_ref().and_then(|o| o.file.as_deref()), Some("run.sh"));
    assert!(
        l.notes.iter().any(|n| n.contains("max_target_length = 4096") && n.contains("replaced by 8192")),
        "{:?}",
        l.notes
    );
    assert!(l.unused.iter().any(|u| u.key.ends_with("run_name") && u.value == "r1"), "{:?}", l.unused);
}

#[test]
fn hostile_input_is_bounded() {
    let words = "python3 -m MaxText.train ".to_string() + &"a=b ".repeat(2_500_000);
    let t = std::time::Instant::now();
    let _ = parse(&words, None);
    assert!(t.elapsed().as_secs() < 60);
    let junk: String = (0..100_000u32).map(|i| char::from_u32(i % 0x2FF + 1).unwrap_or('x')).collect();
    let _ = fmperf_launch::maxtext::parse(&junk, &[]);
    let _ = parse(&format!("python3 -m MaxText.train {}", "${".repeat(100_000)), None);
    let _ = parse(
        "python3 -m MaxText.train per_device_batch_size=1e308 ici_fsdp_parallelism=1073741824 dcn_data_parallelism=1073741824",
        None,
    );
    let _ = parse("python3 -m MaxText.train per_device_batch_size=NaN", None);
    let e = parse(
        "python3 -m MaxText.train ici_tensor_parallelism=1048576 ici_pipeline_parallelism=1048576 \
         ici_context_parallelism=1048576",
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("2^40"), "{e}");
}

/// MaxText's window applies to the local blocks its decoders build (Gemma 2/3/4, gpt-oss,
/// OLMo 3): the real Gemma 3 27B and gpt-oss-120b model files, a `model_name` alone, and a window
/// on a decoder without local blocks (listed as having no effect).
#[test]
fn sliding_windows_of_maxtexts_decoders() {
    let real = |name: &str| {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/real").join(name);
        read(&std::fs::read_to_string(path).unwrap())
    };
    let pattern =
        |l: &fmperf_launch::Launch| (l.settings.window_tokens.copied(), l.settings.window_pattern.get().cloned());
    assert_eq!(pattern(&real("45-maxtext_gemma3-27b.yml")), (Some(1024), Some("6".to_string())));
    let oss = real("44-maxtext_gpt-oss-120b.yml");
    assert_eq!(pattern(&oss), (Some(128), Some("2".to_string())));
    assert!(!oss.unused.iter().any(|u| u.key.ends_with("sliding_window_size")), "{:?}", oss.unused);
    // model_name alone: the model file's window.
    let l = read("python3 -m MaxText.train base.yml model_name=gpt-oss-20b ici_fsdp_parallelism=8");
    assert_eq!(pattern(&l), (Some(128), Some("2".to_string())));
    // Gemma 2: the window in every other of the 26 blocks.
    let g2 = read(
        "base_emb_dim: 2304\nbase_num_query_heads: 8\nbase_num_kv_heads: 4\nbase_mlp_dim: 9216\nbase_num_decoder_layers: 13\nhead_dim: 256\nvocab_size: 256128\ndecoder_block: \"gemma2\"\nsliding_window_size: 4096\n",
    );
    assert_eq!(pattern(&g2), (Some(4096), Some("2".to_string())));
    // A Llama decoder builds no local blocks: the window has no effect, said.
    let llama =
        read("python3 -m MaxText.train base.yml model_name=llama3-8b sliding_window_size=4096 ici_fsdp_parallelism=8");
    assert_eq!(pattern(&llama), (None, None));
    let u = llama.unused.iter().find(|u| u.key.ends_with("sliding_window_size")).expect("listed");
    assert!(u.why.contains("no effect"), "{}", u.why);
    // 0 is base.yml's "no window".
    let none =
        read("python3 -m MaxText.train base.yml model_name=gpt-oss-20b sliding_window_size=0 ici_fsdp_parallelism=8");
    assert_eq!(pattern(&none), (None, None));
}

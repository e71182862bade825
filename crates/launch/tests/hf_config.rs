//! Hugging Face `config.json` of the families people train: multimodal `text_config`, the
//! GPT-2 / Falcon / OPT names, MoE and MLA fields, and the rules that refuse a misread.

use fmperf_launch::{Source, parse, parse_files};

fn read(text: &str) -> fmperf_launch::Launch {
    parse(text, Some("config.json")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn multimodal_configs_read_their_text_model() {
    let l = read(
        r#"{"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
            "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "num_hidden_layers": 48,
              "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
              "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_local_experts": 16,
              "num_experts_per_tok": 1, "interleave_moe_layer_step": 1, "vocab_size": 202048,
              "hidden_act": "silu", "attention_chunk_size": 8192},
            "vision_config": {"hidden_size": 1408}}"#,
    );
    let s = &l.settings;
    assert_eq!((s.hidden.copied(), s.layers.copied(), s.ffn_hidden.copied()), (Some(5120), Some(48), Some(16384)));
    assert_eq!((s.moe.expert_ffn_hidden.copied(), s.moe.shared_experts.copied()), (Some(8192), Some(1)));
    assert_eq!(s.gated_mlp.copied(), Some(true));
    assert_eq!(s.hidden.origin.as_ref().unwrap().key, "text_config.hidden_size");
    assert!(l.notes.iter().any(|n| n.contains("text_config")));
    assert!(l.unused.iter().any(|u| u.key == "vision_config"));
    // Gemma 3: head_dim is not hidden/heads, embeddings tied by default.
    let g = read(
        r#"{"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "hidden_size": 5376,
            "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
            "intermediate_size": 21504, "vocab_size": 262208}}"#,
    );
    assert_eq!((g.settings.head_dim.copied(), g.settings.tied_embeddings.copied()), (Some(128), Some(true)));
}

#[test]
fn gpt2_falcon_and_opt_names() {
    let l = read(
        r#"{"model_type": "gpt2", "n_embd": 1600, "n_layer": 48, "n_head": 25, "n_inner": null, "n_positions": 1024, "vocab_size": 50257, "activation_function": "gelu_new"}"#,
    );
    let s = &l.settings;
    assert_eq!((s.hidden.copied(), s.layers.copied(), s.heads.copied()), (Some(1600), Some(48), Some(25)));
    assert_eq!(
        (s.ffn_hidden.copied(), s.gated_mlp.copied(), s.tied_embeddings.copied()),
        (None, Some(false), Some(true))
    );
    let f7 = read(
        r#"{"model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71, "multi_query": true, "new_decoder_architecture": false, "vocab_size": 65024}"#,
    );
    assert_eq!(f7.settings.kv_heads.copied(), Some(1));
    let f40 = read(
        r#"{"model_type": "falcon", "hidden_size": 8192, "n_layer": 60, "n_head": 128, "num_kv_heads": 8, "multi_query": true, "new_decoder_architecture": true, "vocab_size": 65024}"#,
    );
    assert_eq!(f40.settings.kv_heads.copied(), Some(8));
    let e = parse(
        r#"{"model_type": "falcon", "hidden_size": 8192, "new_decoder_architecture": true}"#,
        Some("config.json"),
    )
    .unwrap_err();
    assert_eq!(e.field(), Some("new_decoder_architecture"));
    let opt = read(
        r#"{"model_type": "opt", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 40, "ffn_dim": 20480, "vocab_size": 50272, "word_embed_proj_dim": 5120}"#,
    );
    assert_eq!(opt.settings.ffn_hidden.copied(), Some(20480));
    let neox = read(
        r#"{"model_type": "gpt_neox", "hidden_size": 6144, "num_hidden_layers": 44, "num_attention_heads": 64, "intermediate_size": 24576, "vocab_size": 50432, "rotary_pct": 0.25}"#,
    );
    assert_eq!(neox.settings.tied_embeddings.copied(), Some(false));
}

#[test]
fn moe_and_latent_attention_fields() {
    let d = read(
        r#"{"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
            "num_key_value_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,
            "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
            "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280, "scoring_func": "sigmoid"}"#,
    );
    let m = &d.settings.moe;
    assert_eq!(
        (m.mla.copied(), m.first_dense_layers.copied(), m.shared_experts.copied()),
        (Some(true), Some(3), Some(1))
    );
    let q = read(
        r#"{"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
            "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
            "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [0, 1],
            "vocab_size": 151936}"#,
    );
    assert_eq!(
        (q.settings.moe.first_dense_layers.copied(), q.settings.moe.expert_ffn_hidden.copied()),
        (Some(2), Some(768))
    );
    let e = parse(r#"{"model_type": "qwen3_moe", "num_experts": 8, "mlp_only_layers": [3, 7]}"#, Some("config.json"))
        .unwrap_err();
    assert_eq!(e.field(), Some("mlp_only_layers"));
    let o = read(
        r#"{"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "num_local_experts": 128, "experts_per_token": 4, "vocab_size": 201088}"#,
    );
    assert_eq!((o.settings.moe.top_k.copied(), o.settings.moe.expert_ffn_hidden.copied()), (Some(4), Some(2880)));
}

#[test]
fn misreads_are_refused() {
    let e = parse(r#"{"model_type": "llama", "hidden_size": 1000, "num_attention_heads": 7}"#, Some("config.json"))
        .unwrap_err();
    assert_eq!(e.field(), Some("hidden_size"));
    assert!(e.to_string().contains("num_attention_heads") && e.to_string().contains("head_dim"), "{e}");
    let e = parse("{\"hidden_size\": 8,\n \"hidden_size\": 16}", Some("config.json")).unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
    let deep = "[".repeat(100_000);
    assert!(parse(&deep, Some("config.json")).is_err());
    let l = read(
        r#"{"model_type": "llama", "hidden_size": 4096, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}"#,
    );
    let why = |k: &str| l.unused.iter().find(|u| u.key == k).map(|u| u.why.clone()).unwrap_or_default();
    assert!(why("max_position_embeddings").contains("sequence length"));
    assert!(why("torch_dtype").contains("launch"));
}

#[test]
fn a_model_only_config_under_a_launch_without_a_shape() {
    let run = "torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 8 \\\n  --seq-length 4096 --bf16\n";
    let cfg = r#"{"model_type": "deepseek_v2", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "n_routed_experts": 64, "num_experts_per_tok": 6, "moe_intermediate_size": 1408, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}"#;
    let l = parse_files(
        &[Source { name: Some("run.sh"), text: run }, Source { name: Some("config.json"), text: cfg }],
        &[],
    )
    .unwrap();
    // The config's shape and latent-attention switch reach the merged launch.
    assert_eq!(l.settings.moe.mla.copied(), Some(true));
    assert_eq!(l.settings.hidden.copied(), Some(2048));
}

/// The sliding window a `config.json` gives the model, read at 8,192 tokens.
fn window_of(cfg: &str) -> (Option<fmperf_core::vocab::SlidingWindow>, fmperf_launch::Launch) {
    use fmperf_launch::scenario::{ModelOnly, Overrides};
    let l = read(cfg);
    let o = Overrides { seq_len: Some(8192), ..Default::default() };
    let m = ModelOnly::from_launch(&l, &o, 1).unwrap_or_else(|e| panic!("{e}"));
    (m.workload.sliding_window, l)
}

/// Sliding-window attention as each family's config states it (shapes from the models' published
/// `config.json` files: Mistral 7B v0.1, Gemma 2 9B, Gemma 3 4B, gpt-oss-20b, Qwen2.5 7B).
#[test]
fn sliding_windows_as_each_family_states_them() {
    use fmperf_core::vocab::SlidingWindow;
    let w = |tokens, full_every| Some(SlidingWindow { tokens, full_every });
    // Mistral 7B v0.1: a 4,096-token window in every block.
    let (mistral, _) = window_of(
        r#"{"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "sliding_window": 4096}"#,
    );
    assert_eq!(mistral, w(4096, None));
    // Gemma 2: no pattern key; the family alternates local and global blocks.
    let (gemma2, l) = window_of(
        r#"{"model_type": "gemma2", "hidden_size": 3584, "num_hidden_layers": 42, "num_attention_heads": 16,
            "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336, "vocab_size": 256000,
            "sliding_window": 4096, "query_pre_attn_scalar": 256}"#,
    );
    assert_eq!(gemma2, w(4096, Some(2)));
    assert!(l.notes.iter().any(|n| n.contains("gemma2")), "{:?}", l.notes);
    // Gemma 3: five local blocks to one global.
    let (gemma3, _) = window_of(
        r#"{"model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34, "num_attention_heads": 8,
            "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 10240, "vocab_size": 262208,
            "sliding_window": 1024, "sliding_window_pattern": 6}"#,
    );
    assert_eq!(gemma3, w(1024, Some(6)));
    // gpt-oss: the per-block list, alternating from a windowed block; the same as the catalog's.
    let types = vec!["\"sliding_attention\", \"full_attention\""; 12].join(", ");
    let (oss, l) = window_of(&format!(
        r#"{{"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64,
            "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "vocab_size": 201088,
            "num_local_experts": 32, "experts_per_token": 4, "sliding_window": 128,
            "layer_types": [{types}]}}"#
    ));
    let catalog = fmperf_core::catalog::find_model("gpt-oss-20b").unwrap().sliding_window;
    assert_eq!((oss, oss), (w(128, Some(2)), catalog));
    assert!(!l.unused.iter().any(|u| u.key == "layer_types" || u.key == "sliding_window"));
    // Qwen2.5: a window stated but switched off — no window, both keys listed with why.
    let (qwen, l) = window_of(
        r#"{"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
            "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
            "sliding_window": 131072, "use_sliding_window": false, "max_window_layers": 28}"#,
    );
    assert_eq!(qwen, None);
    for key in ["sliding_window", "max_window_layers"] {
        let u = l.unused.iter().find(|u| u.key == key).unwrap_or_else(|| panic!("{key} not listed"));
        assert!(u.why.contains("use_sliding_window is false"), "{}", u.why);
    }
    // Qwen2 with the window on from block 20 of 28: not a pattern fmperf holds — said, priced full.
    let (partial, _) = window_of(
        r#"{"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
            "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
            "sliding_window": 4096, "use_sliding_window": true, "max_window_layers": 20}"#,
    );
    assert_eq!(partial, None);
    // Mixtral: null, no window.
    let (mixtral, _) = window_of(
        r#"{"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8,
            "num_experts_per_tok": 2, "sliding_window": null}"#,
    );
    assert_eq!(mixtral, None);
    // Bad values name the key.
    let e = parse(r#"{"model_type": "mistral", "hidden_size": 64, "sliding_window": -1}"#, Some("config.json"));
    assert_eq!(e.unwrap_err().field(), Some("sliding_window"));
    let e = parse(
        r#"{"model_type": "gemma3_text", "hidden_size": 64, "sliding_window": 8, "sliding_window_pattern": "six"}"#,
        Some("config.json"),
    );
    assert_eq!(e.unwrap_err().field(), Some("sliding_window_pattern"));
}

/// Window keys written as null are listed, not dropped; `layer_types` and
/// `sliding_window_pattern` that disagree are an error naming the pattern, and agree silently.
#[test]
fn window_keys_null_and_contradictory() {
    let base = r#""model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
        "vocab_size": 100, "sliding_window": 8"#;
    let l = read(&format!(r#"{{{base}, "sliding_window_pattern": null, "max_window_layers": null}}"#));
    for key in ["sliding_window_pattern", "max_window_layers"] {
        assert!(l.unused.iter().any(|u| u.key == key && u.why.contains("null")), "{key}: {:?}", l.unused);
    }
    let types = r#"["sliding_attention", "full_attention", "sliding_attention", "full_attention"]"#;
    let ok = read(&format!(r#"{{{base}, "layer_types": {types}, "sliding_window_pattern": 2}}"#));
    assert_eq!(ok.settings.window_pattern.get().map(String::as_str), Some("[1,0,1,0]"));
    let e = parse(&format!(r#"{{{base}, "layer_types": {types}, "sliding_window_pattern": 3}}"#), Some("config.json"))
        .unwrap_err();
    assert_eq!(e.field(), Some("sliding_window_pattern"), "{e}");
    assert!(e.to_string().contains("layer_types"), "{e}");
}

/// `attn_implementation` (and the older `_attn_implementation`) names the attention kernel:
/// eager is unfused attention, SDPA / flash-attn 2 FlashAttention-2 class; anything else is an
/// error naming the key.
#[test]
fn attention_implementation() {
    use fmperf_core::extended::AttentionKernel;
    let base = r#""model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16"#;
    let kernel = |v: &str| read(&format!("{{{base}, {v}}}")).settings.attention_kernel.copied();
    assert_eq!(kernel(r#""attn_implementation": "eager""#), Some(AttentionKernel::Unfused));
    assert_eq!(kernel(r#""_attn_implementation": "sdpa""#), Some(AttentionKernel::Fa2));
    assert_eq!(kernel(r#""attn_implementation": "flash_attention_2""#), Some(AttentionKernel::Fa2));
    assert_eq!(kernel(r#""attn_implementation": null"#), None);
    let e = parse(&format!("{{{base}, \"attn_implementation\": \"paged\"}}"), Some("config.json")).unwrap_err();
    assert_eq!(e.field(), Some("attn_implementation"), "{e}");
}

//! Hostile and tricky YAML and TOML, generated here: alias bombs, deep nesting, huge and binary
//! input end in an error (or a reading) quickly, never a panic; the grammar's corners are read as
//! YAML and TOML say.

use std::time::Instant;

use fmperf_launch::{Format, parse_as, toml, yaml};

#[test]
fn an_alias_bomb_is_an_error_naming_the_cap() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let t = Instant::now();
    let e = yaml::read(&text).unwrap_err().to_string();
    assert!(e.contains("1000000") && e.contains("alias"), "{e}");
    assert!(t.elapsed().as_secs() < 5);
}

#[test]
fn a_huge_file_without_aliases_is_not_called_an_alias_bomb() {
    let text: String = (0..1_100_000).map(|i| format!("k{i}: {i}\n")).collect();
    let e = yaml::read(&text).unwrap_err().to_string();
    assert!(e.contains("1000000") && !e.contains("alias"), "{e}");
}

#[test]
fn deep_nesting_and_junk_are_errors_not_panics() {
    let deep = "[".repeat(10_000);
    assert!(yaml::read(&deep).is_err());
    let mut block = String::new();
    for i in 0..200 {
        block.push_str(&" ".repeat(i));
        block.push_str("k:\n");
    }
    let e = yaml::read(&block).unwrap_err().to_string();
    assert!(e.contains("64"), "{e}");
    let junk: String = (0..100_000u32).map(|i| char::from_u32(i % 0x7f + 1).unwrap_or('x')).collect();
    let _ = yaml::read(&junk);
    let _ = toml::read(&junk);
    let _ = parse_as(Format::NemoYaml, &junk);
    let _ = parse_as(Format::Torchtitan, &junk);
    let deep_toml = format!("a = {}{}", "[".repeat(5000), "]".repeat(5000));
    let _ = toml::read(&deep_toml);
    // 10 MB of keys reads in bounded time.
    let big: String = (0..400_000).map(|i| format!("k{i}: {i}\n")).collect();
    let t = Instant::now();
    assert_eq!(yaml::read(&big).unwrap().len(), 400_000);
    assert!(t.elapsed().as_secs() < 60);
    // As many unresolved interpolations, read by the NeMo reader, in bounded time.
    let refs: String = (0..100_000).map(|i| format!("k{i}: ${{missing.k{i}}}_${{k{}}}\n", i + 1)).collect();
    let t = Instant::now();
    let l = parse_as(Format::NemoYaml, &refs).unwrap();
    assert_eq!(l.unused.len(), 100_000);
    assert!(t.elapsed().as_secs() < 60);
}

#[test]
fn anchors_merges_styles_and_documents() {
    let text = "base: &b\n  tp: 2\n  pp: 4\nrun:\n  <<: *b\n  pp: 8\n  name: 'it''s'\n  \
                folded: >\n    a\n    b\n  tag: !!python/tuple [1, 2]\n  flow: {x: 1, y: [a, b]}\n---\n";
    let e = yaml::read(text).unwrap();
    let get = |k: &str| e.iter().find(|x| x.key == k).map(|x| (x.value.as_str(), x.line)).unwrap();
    assert_eq!(get("run.tp"), ("2", 2));
    assert_eq!(get("run.pp"), ("8", 6));
    assert_eq!(get("run.name").0, "it's");
    assert_eq!(get("run.folded").0, "a b\n");
    assert_eq!(get("run.tag").0, "[1, 2]");
    assert_eq!(get("run.flow.y").0, "[a, b]");
    let e = yaml::read("a: 1\n---\nb: 2\n").unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("document"), "{e}");
    let e = yaml::read("a: 1\nb: 2\na: 3\n").unwrap_err().to_string();
    assert!(e.contains("`a`") && e.contains("line 3") && e.contains("line 1"), "{e}");
    let e = yaml::read("a: 1\nb: \"open\nc: 2\n").unwrap_err().to_string();
    assert!(e.contains("YAML line"), "{e}");
}

#[test]
fn interpolations_in_a_nemo_file() {
    let l = parse_as(
        Format::NemoYaml,
        "trainer:\n  devices: 8\n  num_nodes: ${oc.env:NODES,2}\nmodel:\n  hidden_size: 1024\n  \
         ffn_hidden_size: ${multiply:4, ${.hidden_size}}\n  num_layers: 4\n  num_attention_heads: 8\n  \
         encoder_seq_length: 2048\n  max_position_embeddings: ${.encoder_seq_length}\n  micro_batch_size: 1\n  \
         global_batch_size: ${multiply:${trainer.devices}, 4}\n",
    )
    .unwrap();
    let s = &l.settings;
    assert_eq!((s.ffn_hidden.copied(), s.nodes.copied(), s.global_batch.copied()), (Some(4096), Some(2), Some(32)));
    assert!(l.notes.iter().any(|n| n.contains("oc.env")), "{:?}", l.notes);
    // A key fmperf uses that cannot be resolved is an error naming it; an unused one is listed.
    let e = parse_as(Format::NemoYaml, "model:\n  num_layers: ${oc.env:LAYERS}\n").unwrap_err();
    assert_eq!(e.field(), Some("model.num_layers"));
    let l = parse_as(
        Format::NemoYaml,
        "defaults:\n  - _self_\nexp_manager:\n  explicit_log_dir: ${oc.env:LOGS}\nmodel:\n  num_layers: 2\n",
    )
    .unwrap();
    assert!(l.unused.iter().any(|u| u.key == "exp_manager.explicit_log_dir"));
    assert!(l.unused.iter().any(|u| u.key == "defaults.0"));
    assert!(l.notes.iter().any(|n| n.contains("defaults")));
}

#[test]
fn torchtitan_types_and_families() {
    let e = parse_as(Format::Torchtitan, "[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = \"2\"\n")
        .unwrap_err();
    assert_eq!(e.field(), Some("parallelism.tensor_parallel_degree"));
    assert!(e.to_string().contains("string"), "{e}");
    let l = parse_as(
        Format::Torchtitan,
        "[model]\nname = \"deepseek_v3\"\nflavor = \"16B\"\n[parallelism]\nexpert_parallel_degree = 8\n",
    )
    .unwrap();
    let m = &l.settings.moe;
    assert_eq!((m.experts.copied(), m.top_k.copied(), m.expert_ffn_hidden.copied()), (Some(64), Some(6), Some(1408)));
    assert_eq!(l.settings.layers.copied(), Some(27));
    let l = parse_as(Format::Torchtitan, "[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n").unwrap();
    assert_eq!((l.settings.moe.experts.copied(), l.settings.head_dim.copied()), (Some(128), Some(128)));
    let e = parse_as(Format::Torchtitan, "[model]\nname = \"gpt9\"\nflavor = \"1T\"\n").unwrap_err();
    assert_eq!(e.field(), Some("model.name"));
    let l = parse_as(
        Format::Torchtitan,
        "[model]\nname = \"llama2\"\nflavor = \"7B\"\nnorm_type = \"rmsnorm\"\n[training]\nbatch_size = 8\n\
         data_parallel_degree = -1\ntensor_parallel_degree = 2\nenable_fp8_linear = true\n",
    )
    .unwrap();
    assert_eq!((l.settings.ffn_hidden.copied(), l.settings.tp.copied()), (Some(11008), Some(2)));
    assert_eq!(l.settings.precision.copied(), Some(fmperf_core::catalog::Precision::Fp8));
    assert!(l.notes.iter().any(|n| n.contains("device count")), "{:?}", l.notes);
}

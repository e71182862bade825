//! Measured MoE runs written by other people: the same run under Hugging Face / Megatron-LM names,
//! or flat, is read to the same setup as the shipped (canonical) row; a row
//! is MoE by what it states (more than one routed expert), never by its model's name.

use fmperf_core::validate::moe_row_fields::{is_moe_row, split_by_kind};
use fmperf_core::validate::moe_runs::{MOE_RUNS_JSON, MoeRunSetup, interpret_moe_row};
use serde_json::{Map, Value, json};

fn shipped(id: &str) -> Value {
    let doc: Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    doc["rows"].as_array().unwrap().iter().find(|r| r["id"] == id).cloned().unwrap()
}

/// The setup without its notes (which say in words how a row was read).
fn setup(row: &Value) -> MoeRunSetup {
    let mut s = interpret_moe_row(row).unwrap_or_else(|e| panic!("{e}: {row}"));
    s.notes.clear();
    s
}

/// `row` with the fields of group `group` renamed (`(from, to)`; `to` empty: removed).
fn renamed(row: &Value, group: &str, names: &[(&str, &str)]) -> Value {
    let mut row = row.clone();
    let g = row[group].as_object_mut().unwrap();
    for (from, to) in names {
        let v = g.remove(*from).unwrap_or_else(|| panic!("{group}.{from}"));
        if !to.is_empty() {
            g.insert(to.to_string(), v);
        }
    }
    row
}

/// `row` with the fields of its groups written at the top of the row.
fn flat(row: &Value, groups: &[&str]) -> Value {
    let mut out: Map<String, Value> = row.as_object().unwrap().clone();
    for g in groups {
        if let Some(Value::Object(o)) = out.remove(*g) {
            for (k, v) in o {
                out.insert(k, v);
            }
        }
    }
    Value::Object(out)
}

const QWEN: &str = "mb2602_qwen3_30b_gb300_mxfp8_8";
const DSV3: &str = "mb2602_dsv3_b300_mxfp8_256";
const MAVERICK: &str = "v5p_llama4maverick_128_bf16";

/// Hugging Face config.json names of the model and Megatron-LM argument names of the layout.
fn hf_megatron(row: &Value) -> Value {
    let row = renamed(
        row,
        "model",
        &[
            ("layers", "num_hidden_layers"),
            ("hidden", "hidden_size"),
            ("heads", "num_attention_heads"),
            ("kv_heads", "num_key_value_heads"),
            ("vocab", "vocab_size"),
            ("seq_len", "max_position_embeddings_unused"),
            ("num_experts", "num_experts_per_tok_unused"),
            ("top_k", "num_experts_per_tok"),
            ("moe_ffn_hidden", "moe_intermediate_size"),
        ],
    );
    // `seq_len` under another name, experts under Mixtral's, the unused names dropped.
    let mut row = renamed(&row, "model", &[("max_position_embeddings_unused", "seq_length")]);
    let experts = row["model"]["num_experts_per_tok_unused"].clone();
    row["model"].as_object_mut().unwrap().remove("num_experts_per_tok_unused");
    row["model"]["num_local_experts"] = experts;
    renamed(
        &row,
        "parallel",
        &[
            ("tp", "tensor_model_parallel_size"),
            ("pp", "pipeline_model_parallel_size"),
            ("ep", "expert_model_parallel_size"),
            ("etp", "expert_tensor_parallel_size"),
            ("cp", "context_parallel_size"),
            ("dp", "data_parallel_size"),
            ("vpp", "virtual_pipeline_model_parallel_size"),
            ("dispatcher", "moe_token_dispatcher_type"),
        ],
    )
}

#[test]
fn hf_and_megatron_names_read_as_the_canonical_row() {
    for id in [QWEN, DSV3] {
        let row = shipped(id);
        let mut foreign = hf_megatron(&row);
        foreign = renamed(
            &foreign,
            "batch",
            &[("global_batch_seqs", "global_batch_size"), ("micro_batch", "micro_batch_size")],
        );
        assert!(is_moe_row(&foreign), "{id}");
        assert_eq!(setup(&foreign), setup(&row), "{id}");
    }
}

#[test]
fn deepseek_config_names_and_mla_fields_beside_the_others() {
    let row = shipped(DSV3);
    let mut f = renamed(
        &row,
        "model",
        &[
            ("num_experts", "n_routed_experts"),
            ("top_k", "num_experts_per_tok"),
            ("moe_ffn_hidden", "moe_intermediate_size"),
            ("ffn_hidden_dense", "intermediate_size"),
            ("shared_experts", "n_shared_experts"),
            ("dense_layers", "first_k_dense_replace"),
            ("moe_layers", ""),
            ("mtp_layers", "num_nextn_predict_layers"),
        ],
    );
    // MLA's dimensions at the model's level, as DeepSeek's config.json writes them.
    let mla = f["model"]["mla"].as_object().unwrap().clone();
    f["model"]["mla"] = Value::Null;
    for (k, v) in mla {
        f["model"][k] = v;
    }
    let s = setup(&f);
    assert_eq!(s, setup(&row));
    assert!(s.workload.mla.is_some() && s.workload.moe.unwrap().first_dense == 3);
    assert_ne!(s.workload.ffn_hidden, s.workload.moe.unwrap().expert_ffn, "the dense width is intermediate_size");
}

#[test]
fn numbers_as_strings_and_flat_rows() {
    let row = shipped(QWEN);
    // Numbers written as text are refused, naming the field (issue 30: they were read).
    for (group, field, text) in [
        ("model", "num_experts", "128"),
        ("model", "hidden", "2,048"),
        ("parallel", "ep", "8"),
        ("batch", "global_batch_seqs", "512"),
        ("measured", "tflops_per_device", "699"),
    ] {
        let mut s = row.clone();
        s[group][field] = json!(text);
        let e = interpret_moe_row(&s).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{group}.{field}: must be a JSON number")), "{e}");
    }
    // A degree or a count of the layout or the batch that is 0 or not whole is refused, naming
    // the field (`interleave_vpp` 0 had been read as 1, `tp` 2.5 as 1).
    for (group, field, value) in [
        ("parallel", "interleave_vpp", json!(0)),
        ("parallel", "tp", json!(2.5)),
        ("parallel", "ep", json!(-8)),
        ("batch", "micro_batch", json!(0)),
    ] {
        let mut s = row.clone();
        s[group][field] = value;
        let e = interpret_moe_row(&s).unwrap_err().to_string();
        assert!(e.contains(&format!("{group}.{field}")) && e.contains("whole number of at least 1"), "{e}");
    }
    let f = flat(&hf_megatron(&row), &["model", "parallel", "batch", "routing"]);
    assert!(f.get("model").is_none() && f.get("num_local_experts").is_some());
    assert!(is_moe_row(&f));
    assert_eq!(setup(&f), setup(&row));
}

#[test]
fn alternating_layers_from_counts_or_a_step_not_from_the_name() {
    let row = shipped(MAVERICK);
    let canonical = setup(&row);
    assert_eq!(canonical.workload.moe.map(|m| (m.first_dense, m.moe_every)), Some((0, 2)));
    // Another name: the equal counts still say the layers alternate.
    let mut other = row.clone();
    other["model"]["name"] = json!("our-moe-48l");
    other["model"]["shape_source"] = json!("our config");
    assert_eq!(setup(&other), canonical);
    // Llama 4's config.json: a step instead of the counts.
    let step = renamed(&other, "model", &[("dense_layers", ""), ("moe_layers", "")]);
    let mut step = step;
    step["model"]["interleave_moe_layer_step"] = json!(2);
    assert_eq!(setup(&step), canonical);
    // Without counts or step the layers do not alternate.
    let mut none = renamed(&other, "model", &[("dense_layers", ""), ("moe_layers", "")]);
    none["model"]["router"] = json!("softmax top-1");
    assert_eq!(setup(&none).workload.moe.map(|m| m.moe_every), Some(1));
    // Megatron's 0/1 list expression (`--moe-layer-freq`) reads as the same alternation, and as
    // leading dense blocks; a JSON array, a list of the wrong length or a pattern fmperf does not
    // model is refused, naming the field as given.
    let mut list = step.clone();
    list["model"].as_object_mut().unwrap().remove("interleave_moe_layer_step");
    list["model"]["moe_layer_freq"] = json!("[0,1]*24");
    assert_eq!(setup(&list), canonical);
    list["model"]["moe_layer_freq"] = json!("([0]*3+[1]*45)");
    let m = setup(&list).workload.moe.unwrap();
    assert_eq!((m.first_dense, m.moe_every), (3, 1));
    for bad in [json!([0, 1, 0, 1]), json!("[0,1]*3"), json!("[1,0,0]*16")] {
        list["model"]["moe_layer_freq"] = bad;
        let e = interpret_moe_row(&list).unwrap_err().to_string();
        assert!(e.contains("model.moe_layer_freq"), "{e}");
    }
}

#[test]
fn a_row_is_moe_when_it_states_more_than_one_expert() {
    let dense = json!({"id": "d", "model": {"layers": 32, "num_experts": null}});
    assert!(!is_moe_row(&dense));
    assert!(!is_moe_row(&json!({"id": "d", "model": {"num_local_experts": 1}})));
    assert!(!is_moe_row(&json!({"id": "d", "num_hidden_layers": 32})));
    assert!(is_moe_row(&json!({"id": "m", "model": {"n_routed_experts": 256}})));
    // A count written as text is not read as one (the dense reader refuses it, naming the field).
    assert!(!is_moe_row(&json!({"id": "m", "moe_num_experts": "64"})));
    assert!(is_moe_row(&json!({"id": "m", "moe_num_experts": 64})));
    assert!(is_moe_row(&json!({"id": "m", "model_config": {"num_moe_experts": 8}})));
}

#[test]
fn a_mixed_file_splits_by_row() {
    let moe = shipped(QWEN);
    let dense = json!({"id": "dense-1", "model": {"layers": 32, "num_experts": null}});
    let text = json!({"schema_version": 1, "rows": [dense, moe]}).to_string();
    let (d, m) = split_by_kind(&text);
    let (d, m): (Value, Value) =
        (serde_json::from_str(&d.unwrap()).unwrap(), serde_json::from_str(&m.unwrap()).unwrap());
    assert_eq!(d["rows"].as_array().unwrap().len(), 1);
    assert_eq!(d["rows"][0]["id"], "dense-1");
    assert_eq!(d["schema_version"], 1);
    assert_eq!(m["rows"][0]["id"], QWEN);
    // One kind only: the text as given.
    assert_eq!(split_by_kind(MOE_RUNS_JSON), (None, Some(MOE_RUNS_JSON.to_string())));
    let only_dense = json!({"rows": [{"id": "x", "model": {"num_experts": 1}}]}).to_string();
    assert_eq!(split_by_kind(&only_dense), (Some(only_dense.clone()), None));
}

#[test]
fn a_restated_moe_source_is_held_out_as_the_shipped_one() {
    use fmperf_core::validate::moe_fit::{fit_rows, moe_fit_report, moe_fit_report_for_file};
    // Someone else's file restates one shipped source's rows under its own title: each row's
    // held-out error must be the one the shipped file gives it.
    let doc: serde_json::Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    let mut rows: Vec<serde_json::Value> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["source"]["title"].as_str().is_some_and(|t| t.starts_with("SimuMax")))
        .cloned()
        .collect();
    assert!(rows.len() >= 3);
    for r in &mut rows {
        r["id"] = format!("their-{}", r["id"].as_str().unwrap()).into();
        r["source"] = serde_json::json!({"title": "Their MoE benchmark"});
    }
    let theirs = moe_fit_report_for_file(&fit_rows(&serde_json::json!({ "rows": rows }).to_string()).unwrap());
    let ours = moe_fit_report(&fit_rows(MOE_RUNS_JSON).unwrap());
    assert_eq!(theirs.rows.len(), rows.len(), "only the file's rows are reported");
    for (id, loso, _) in &theirs.rows {
        let (_, want, _) = ours.rows.iter().find(|(o, _, _)| format!("their-{o}") == *id).unwrap();
        assert!((loso - want).abs() < 1e-12, "{id}: {loso} vs {want}");
    }
}

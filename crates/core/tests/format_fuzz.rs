//! Property tests (a seeded generator of our own, no extra dependency): no input makes the parsers,
//! the field validators, the catalog mapping or the reduction to a reference shape panic, and every
//! document that parses survives `to_json` unchanged.
//!
//! Case families: random bytes, random JSON values, mutated valid documents (value-level and
//! text-level), random field edits, random model inputs (→ shape → model summary), random mapping
//! options on every catalog system.
//!
//! `fuzz_ci` runs `FMPERF_FUZZ_CASES` cases (default 100,000, about 5 s unoptimised); the ignored
//! `fuzz_million` runs 1,000,000 (`cargo test -p fmperf-core --release --test format_fuzz -- --ignored`).
//! `FMPERF_FUZZ_SEED` changes the seed. Each run prints its case count and time.

use std::time::Instant;

use fmperf_core::catalog::{
    self, CatalogModel, Fabric, FabricKind, MappingOptions, Mlp, Precision, TrainingBudget, to_system_params,
};
use fmperf_core::format::{self, Document};
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::reference::model_summary_on;
use fmperf_core::schema::{fields, model_fields, system_fields};
use fmperf_core::{ModelShape, SystemParams};
use serde_json::{Map, Value, json};

mod fuzz_support;

use fuzz_support::Rng;

/// Names worth using as keys and string values: every field name, enum names, ids, junk.
fn vocabulary() -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for table in [
        model_fields::MODEL_FIELDS,
        system_fields::SYSTEM_FIELDS,
        fields::SCENARIO_FIELDS,
        fields::REFERENCE_SYSTEM_FIELDS,
        fields::REFERENCE_MODEL_FIELDS,
    ] {
        for s in table {
            v.push(s.path.rsplit('.').next().unwrap_or(s.path).to_string());
        }
    }
    for s in [
        "schema_version",
        "kind",
        "model",
        "system",
        "scenario",
        "gelu",
        "swiglu",
        "bf16",
        "fp8",
        "1d",
        "2d",
        "2d-seqp",
        "gpu",
        "torus",
    ] {
        v.push(s.to_string());
    }
    v.extend(catalog::models().iter().map(|m| m.id.clone()));
    v.extend(catalog::systems().iter().map(|s| s.id.clone()));
    v.extend(["", " ", "é", "\u{0}", "🙂", "A100", "x".repeat(300).as_str()].iter().map(|s| s.to_string()));
    v
}

fn random_number(rng: &mut Rng) -> Value {
    match rng.below(10) {
        0 => json!(0),
        1 => json!(-(rng.below(1000) as i64)),
        2 => json!(rng.below(10)),
        3 => json!(rng.below(100_000)),
        4 => json!(rng.next()),
        5 => json!((rng.next() as f64) / 7.0),
        6 => json!(rng.below(1000) as f64 + 0.5),
        7 => json!(*rng.pick(&[1e-12, 2e-9, 1e-9, 0.7, 1.0, 1.5, 1e300, -1e300, 5e-324, -0.0])),
        8 => json!(1u64 << rng.below(64)),
        _ => json!(i64::MIN + rng.below(10) as i64),
    }
}

fn random_json(rng: &mut Rng, vocab: &[String], depth: u32) -> Value {
    let kind = if depth >= 4 { rng.below(4) } else { rng.below(7) };
    match kind {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => random_number(rng),
        3 => Value::String(rng.pick(vocab).clone()),
        4 | 5 => {
            let mut m = Map::new();
            for _ in 0..rng.below(8) {
                m.insert(rng.pick(vocab).clone(), random_json(rng, vocab, depth + 1));
            }
            if rng.chance(30) {
                m.insert("schema_version".into(), json!(1));
                m.insert("kind".into(), json!(rng.pick(&["model", "system", "scenario"])));
            }
            Value::Object(m)
        }
        _ => Value::Array((0..rng.below(5)).map(|_| random_json(rng, vocab, depth + 1)).collect()),
    }
}

/// Applies one random edit somewhere in `v`.
fn mutate(rng: &mut Rng, v: &mut Value, vocab: &[String]) {
    // Walk down a random path.
    let mut node = v;
    loop {
        let go_down = rng.chance(60);
        let next_key = match node {
            Value::Object(m) if go_down && !m.is_empty() => {
                let keys: Vec<String> = m.keys().cloned().collect();
                Some(rng.pick(&keys).clone())
            }
            _ => None,
        };
        match next_key {
            Some(k) => node = node.as_object_mut().and_then(|m| m.get_mut(&k)).expect("key exists"),
            None => break,
        }
    }
    match (rng.below(8), &mut *node) {
        (0, Value::Object(m)) if !m.is_empty() => {
            let keys: Vec<String> = m.keys().cloned().collect();
            m.remove(rng.pick(&keys).as_str());
        }
        (1, Value::Object(m)) => {
            m.insert(rng.pick(vocab).clone(), random_json(rng, vocab, 2));
        }
        (2, Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(1.0);
            *node = json!(x * *rng.pick(&[-1.0, 0.0, 0.5, 1.000_000_1, 2.0, 1e6, 1e-6]));
        }
        (3, Value::Number(n)) => *node = Value::String(n.to_string()),
        (4, _) => *node = Value::Array(vec![node.clone()]),
        _ => *node = random_json(rng, vocab, 2),
    }
}

fn mutate_text(rng: &mut Rng, text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..=rng.below(3) {
        if b.is_empty() {
            break;
        }
        let i = rng.below(b.len() as u64) as usize;
        match rng.below(5) {
            0 => b[i] = rng.next() as u8,
            1 => {
                let j = (i + rng.below(20) as usize).min(b.len());
                b.drain(i..j);
            }
            2 => b.truncate(i),
            3 => {
                let j = (i + rng.below(20) as usize).min(b.len());
                let copy = b[i..j].to_vec();
                b.splice(i..i, copy);
            }
            _ => b.insert(i, *rng.pick(b"{}[],:\"0-.e9 ")),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Everything that can be done with a parsed document must not panic, and export is stable.
fn exercise(doc: &Document, rng: &mut Rng) {
    let text = format::to_json(doc);
    let back = format::parse(&text).unwrap_or_else(|e| panic!("exported document does not parse: {e:?}\n{text}"));
    assert_eq!(&back, doc, "export changed the document:\n{text}");
    match doc {
        Document::Model(m) => exercise_model(m),
        Document::System(s) => {
            let _ = to_system_params(s, &random_options(rng));
        }
        Document::Scenario(s) => {
            if let Ok(r) = s.resolve() {
                let _ = model_summary_on(&r.shape, &r.mapped.params);
            }
        }
    }
}

fn exercise_model(m: &CatalogModel) {
    let _ = m.reference_caveats();
    let _ = m.reference_compatible();
    if let Ok(shape) = m.to_shape() {
        shape.validate().expect("to_shape returns valid shapes");
        let _ = model_summary_on(&shape, &SystemParams::h200());
        let _ = format::model_to_reference_json(&shape);
    }
}

fn random_count(rng: &mut Rng, max: u64) -> Option<u64> {
    match rng.below(10) {
        0 => None,
        1 => Some(0),
        2 => Some(max),
        3 => Some(max + 1),
        4 => Some(rng.next()),
        5 => Some(1),
        _ => Some(1 + rng.below(max.min(100_000))),
    }
}

fn random_model(rng: &mut Rng) -> CatalogModel {
    CatalogModel {
        id: "fuzz".into(),
        name: "fuzz".into(),
        family: "custom".into(),
        seq_len: random_count(rng, fields::MAX_SEQ_LEN),
        hidden: random_count(rng, fields::MAX_HIDDEN),
        heads: random_count(rng, fields::MAX_HEADS),
        kv_heads: random_count(rng, fields::MAX_HEADS),
        head_dim: None,
        layers: random_count(rng, fields::MAX_LAYERS),
        ffn_hidden: random_count(rng, fields::MAX_FFN),
        mlp: if rng.chance(50) { Mlp::Gelu } else { Mlp::SwiGlu },
        vocab: random_count(rng, 1 << 24),
        params_b: None,
        moe: None,
        mla: None,
        mtp_layers: None,
        sliding_window: None,
        training_budget: TrainingBudget::Tokens(1e12),
        sources: vec![],
        notes: vec![],
        field_sources: Default::default(),
    }
}

fn random_options(rng: &mut Rng) -> MappingOptions {
    let opt_f =
        |rng: &mut Rng| rng.chance(30).then(|| *rng.pick(&[0.0, -1.0, 1e-300, 50.0, 1e308, f64::NAN, f64::INFINITY]));
    MappingOptions {
        domain_size: rng.chance(50).then(|| *rng.pick(&[0, 1, 2, 4, 8, 64, 72, 1 << 20, u64::MAX])),
        nics_per_device: rng.chance(30).then(|| *rng.pick(&[0, 1, 2, 8, u64::MAX])),
        precision: rng.chance(70).then(|| *rng.pick(&Precision::ALL)),
        vector_tflops: opt_f(rng),
        scale_up_gbps: opt_f(rng),
        scale_out_gbps: opt_f(rng),
        mode: *rng.pick(&[ModeKind::Reference, ModeKind::Extended]),
        fabric: rng.chance(30).then(|| Fabric {
            latency_s: opt_f(rng),
            achievable: opt_f(rng),
            oversubscription: opt_f(rng),
            ..Fabric::of_kind(FabricKind::Efa)
        }),
    }
}

fn seeds() -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in catalog::models() {
        out.push(serde_json::from_str(&format::to_json(&Document::Model(m.clone()))).unwrap());
    }
    for s in catalog::systems() {
        out.push(serde_json::from_str(&format::to_json(&Document::System(s.clone()))).unwrap());
    }
    out.push(serde_json::from_str(&format::model_to_reference_json(&ModelShape::GPT3)).unwrap());
    out.push(serde_json::from_str(&format::system_to_reference_json(&SystemParams::h200())).unwrap());
    out.push(json!({"schema_version": 1, "kind": "scenario", "model": "gpt3_1T", "system": "H200", "devices": 2048,
        "global_batch": 4096, "strategies": ["1d", "2d"], "top_k": 5, "training_budget": {"tokens": 1e12}}));
    out.push(json!({"schema_version": 1, "kind": "scenario", "model": {"id": "m", "seq_len": 2048, "hidden": 4096,
        "heads": 32, "layers": 24}, "system": {"id": "s", "peak_tflops": {"bf16": 100, "fp16_vector": 20},
        "memory_gb": 80, "memory_bw_gbps": 2000, "scale_up": {"bw_per_device_unidir_gbps": 300, "domain_size": 8},
        "scale_out": {"nic_gbps_per_device": 25}}, "devices": 64, "global_batch": 512}));
    out
}

/// Runs `cases` cases; returns how many documents parsed successfully.
fn run(cases: u64, seed: u64) -> u64 {
    let mut rng = Rng(seed);
    let vocab = vocabulary();
    let seeds = seeds();
    let seed_texts: Vec<String> = seeds.iter().map(|v| v.to_string()).collect();
    let systems = catalog::systems();
    let field_tables = [model_fields::MODEL_FIELDS, system_fields::SYSTEM_FIELDS, fields::SCENARIO_FIELDS];
    let mut parsed = 0;
    for _ in 0..cases {
        let result = match rng.below(8) {
            0 => {
                let bytes: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
                format::parse(&String::from_utf8_lossy(&bytes)).ok()
            }
            1 => format::parse_value(&random_json(&mut rng, &vocab, 0)).ok().map(|p| p.document),
            2 | 3 => {
                let mut v = rng.pick(&seeds).clone();
                for _ in 0..=rng.below(3) {
                    mutate(&mut rng, &mut v, &vocab);
                }
                format::parse_value(&v).ok().map(|p| p.document)
            }
            4 => {
                let text = rng.pick(&seed_texts).clone();
                format::parse(&mutate_text(&mut rng, &text)).ok()
            }
            5 => {
                let m = random_model(&mut rng);
                exercise_model(&m);
                None
            }
            6 => {
                let s = &systems[rng.below(systems.len() as u64) as usize];
                if let Ok(mapped) = to_system_params(s, &random_options(&mut rng)) {
                    mapped.params.validate().expect("mapped parameters are valid");
                }
                None
            }
            _ => {
                let table = *rng.pick(&field_tables);
                let path = if rng.chance(90) { rng.pick(table).path.to_string() } else { rng.pick(&vocab).clone() };
                let value = match rng.below(3) {
                    0 => random_json(&mut rng, &vocab, 2).to_string(),
                    1 => rng.pick(&vocab).clone(),
                    _ => {
                        let n = random_number(&mut rng).to_string();
                        mutate_text(&mut rng, &n)
                    }
                };
                let _ = format::validate_field(table, &path, &value);
                let _ = format::validate_scenario_field(&path, &value);
                None
            }
        };
        if let Some(doc) = result {
            parsed += 1;
            exercise(&doc, &mut rng);
        }
    }
    parsed
}

fn cases_from_env(default: u64) -> u64 {
    std::env::var("FMPERF_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn seed_from_env() -> u64 {
    std::env::var("FMPERF_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_F00D)
}

#[test]
fn fuzz_ci() {
    let cases = cases_from_env(100_000);
    let t = Instant::now();
    let parsed = run(cases, seed_from_env());
    println!("fuzz_ci: {cases} cases ({parsed} valid documents) in {:.2} s", t.elapsed().as_secs_f64());
    assert!(parsed > cases / 50, "the mutations should leave some documents valid: {parsed}");
}

#[test]
#[ignore = "long: a million cases; run with --release -- --ignored"]
fn fuzz_million() {
    let cases = cases_from_env(1_000_000);
    let t = Instant::now();
    let parsed = run(cases, seed_from_env() ^ 0xA5A5);
    println!("fuzz_million: {cases} cases ({parsed} valid documents) in {:.2} s", t.elapsed().as_secs_f64());
}

//! Property test of the measured-run readers (issue 30): no file of measured runs, however
//! mangled, makes `validate` panic. Each case takes a few shipped rows (dense, MoE or memory),
//! replaces values at random paths by what people and tools write by mistake (numbers as strings,
//! negatives, zero, huge and fractional counts, `null`, words, nested objects, empty arrays) or
//! drops keys, and validates the file in extended mode (the leave-one-source-out refits are left
//! out: they price the same rows again).
//!
//! `FMPERF_FUZZ_CASES` sets the number of cases (default 400); `FMPERF_FUZZ_SEED` the seed.

use std::time::Instant;

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{moe_row_fields, moe_runs, parse_measured_runs, validate};
use serde_json::{Value, json};

mod fuzz_support;

use fuzz_support::Rng;

/// What replaces a value.
fn junk(rng: &mut Rng) -> Value {
    let options = [
        json!("4096"),
        json!(-1),
        json!(0),
        json!(1e308),
        json!(-1e308),
        json!(0.5),
        json!(18446744073709551615u64),
        json!(null),
        json!("full"),
        json!("none of the above"),
        json!(""),
        json!([]),
        json!({}),
        json!(true),
        json!({"value": 3, "unit": "ms"}),
        json!("1,024"),
        json!("8x H100"),
        json!("ZeRO-3 over -1 ranks"),
    ];
    options[rng.index(options.len())].clone()
}

/// Every path (object keys and array indices) below `v`.
fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push(k.clone());
                out.push(at.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(i.to_string());
                out.push(at.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// Replaces or removes the value at `path`.
fn edit(v: &mut Value, path: &[String], with: Option<Value>) {
    let Some((last, head)) = path.split_last() else { return };
    let mut cur = v;
    for k in head {
        cur = match cur {
            Value::Object(m) => match m.get_mut(k) {
                Some(x) => x,
                None => return,
            },
            Value::Array(a) => match k.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(x) => x,
                None => return,
            },
            _ => return,
        };
    }
    match (cur, with) {
        (Value::Object(m), Some(w)) => {
            m.insert(last.clone(), w);
        }
        (Value::Object(m), None) => {
            m.remove(last);
        }
        (Value::Array(a), Some(w)) => {
            if let Some(x) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *x = w;
            }
        }
        _ => {}
    }
}

#[test]
fn no_mangled_file_of_measured_runs_makes_validate_panic() {
    let (cases, seed) = (fuzz_support::cases(400), fuzz_support::seed(30));
    let files: Vec<Value> = [
        fmperf_core::validate::MEASURED_RUNS_JSON,
        fmperf_core::validate::MEASURED_MEMORY_RUNS_JSON,
        moe_runs::MOE_RUNS_JSON,
    ]
    .iter()
    .map(|t| serde_json::from_str(t).expect("a shipped file parses"))
    .collect();
    let mut rng = Rng(seed);
    let start = Instant::now();
    let mut read = 0;
    for case in 0..cases {
        let file = &files[rng.index(files.len())];
        let Some(rows) = file["rows"].as_array().or_else(|| file["runs"].as_array()) else { continue };
        let mut picked: Vec<Value> = (0..1 + rng.index(3)).map(|_| rows[rng.index(rows.len())].clone()).collect();
        for row in picked.iter_mut() {
            let mut all = Vec::new();
            paths(row, &mut Vec::new(), &mut all);
            for _ in 0..=rng.index(5) {
                if all.is_empty() {
                    break;
                }
                let p = all[rng.index(all.len())].clone();
                let with = if rng.index(5) == 0 { None } else { Some(junk(&mut rng)) };
                edit(row, &p, with);
            }
        }
        let text = json!({"rows": picked}).to_string();
        let outcome = std::panic::catch_unwind(|| {
            // A mixed file is split by kind, as `fmperf validate` does; each part is validated.
            let (dense, moe) = moe_row_fields::split_by_kind(&text);
            let mut ok = false;
            if let Some(d) = dense
                && let Ok(f) = parse_measured_runs(&d)
            {
                ok |= !validate(&f, ModeKind::Extended).rows.is_empty();
            }
            if let Some(m) = moe {
                ok |= moe_runs::validate_moe_runs(&m).is_ok_and(|r| !r.is_empty());
            }
            ok
        });
        match outcome {
            Ok(ok) => read += usize::from(ok),
            Err(_) => panic!("case {case} (seed {seed}) made validate panic:\n{text}"),
        }
    }
    println!(
        "{cases} mangled files of measured runs (seed {seed}) in {:.1} s: {read} read, the rest refused",
        start.elapsed().as_secs_f64()
    );
    assert!(read * 4 > cases, "only {read} of {cases} mangled files were read");
}

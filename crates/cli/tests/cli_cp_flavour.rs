//! `fmperf search --ext cp_comm=search` (issue 31 §1): the search chooses the context-parallel
//! flavour per layout and every output says which (JSON: `cp_comm`, `cp_ulysses` in `execution`;
//! table and CSV: columns of the same names); without it the outputs carry no flavour; an explicit
//! flavour that cannot apply is refused by name.

mod support;
use support::fmperf as run;

use serde_json::Value;

fn fmperf(line: &str) -> std::process::Output {
    run(line.split_whitespace())
}

fn stdout(line: &str) -> String {
    let out = fmperf(line);
    assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SCENARIO: &str = "search --model llama3-8b --system nvidia_h100_sxm5_80gb --gpus 32 --global-batch 32 \
                        --seq-len 131072 --strategy 2d-seqp --top 8";

#[test]
fn the_search_states_the_flavour_it_chose() {
    let v: Value = serde_json::from_str(&stdout(&format!("{SCENARIO} --ext cp_comm=search --format json"))).unwrap();
    let rows = v["results"].as_array().unwrap();
    assert!(!rows.is_empty(), "{v}");
    for r in rows {
        let (cp, e) = (r["config"]["cp"].as_u64().unwrap(), &r["execution"]);
        if cp == 1 {
            assert!(e.get("cp_comm").is_none(), "{r}");
            continue;
        }
        let u = e["cp_ulysses"].as_u64().unwrap();
        match e["cp_comm"].as_str().unwrap() {
            "ring" => assert_eq!(u, 1),
            "ulysses" => assert_eq!(u, cp),
            "hybrid" => assert!(u > 1 && u < cp && cp % u == 0, "{r}"),
            other => panic!("flavour {other}"),
        }
        // Llama-3-8B has 8 K/V heads: no Ulysses degree above 8.
        assert!(u <= 8, "{r}");
    }
    // At 128K tokens on 8-GPU domains the winner is not the plain ring (Ulysses inside a domain).
    assert_ne!(rows[0]["execution"]["cp_comm"], "ring", "{}", rows[0]);

    let csv = stdout(&format!("{SCENARIO} --ext cp_comm=search --format csv"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "cp_comm").expect("a cp_comm column");
    assert_eq!(header[at + 1], "cp_ulysses");
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(first[at], rows[0]["execution"]["cp_comm"].as_str().unwrap());
    let table = stdout(&format!("{SCENARIO} --ext cp_comm=search"));
    assert!(table.contains("cp_ulysses"), "{table}");
    assert!(table.contains("execution chosen by the search"), "{table}");
}

#[test]
fn a_fixed_flavour_writes_no_flavour() {
    for ext in ["", " --ext cp_comm=ring", " --ext cp_comm=hybrid,cp_ulysses=4"] {
        let v: Value = serde_json::from_str(&stdout(&format!("{SCENARIO}{ext} --format json"))).unwrap();
        for r in v["results"].as_array().unwrap() {
            assert!(r["execution"].get("cp_comm").is_none(), "{ext}: {r}");
        }
        let csv = stdout(&format!("{SCENARIO}{ext} --format csv"));
        assert!(!csv.lines().next().unwrap().contains("cp_comm"), "{ext}");
    }
}

#[test]
fn an_explicit_flavour_that_cannot_apply_is_refused_by_name() {
    // Ulysses over 16 devices cannot split Llama-3-8B's 8 K/V heads: every layout is refused and
    // the search says why, naming the switch; under `search` the same layouts run as hybrids.
    let base = "search --model llama3-8b --system nvidia_h100_sxm5_80gb --gpus 16 --global-batch 16 --seq-len 65536 \
                --cp 16 --strategy 2d-seqp";
    let out = stdout(&format!("{base} --ext cp_comm=ulysses"));
    assert!(out.contains("ext.cp_comm = 16") && out.contains("K/V heads"), "{out}");
    let v: Value = serde_json::from_str(&stdout(&format!("{base} --ext cp_comm=search --format json"))).unwrap();
    let first = &v["results"][0]["execution"];
    assert_eq!(first["cp_comm"], "hybrid", "{v}");
    // A value that is no flavour lists the four.
    let out = fmperf(&format!("{base} --ext cp_comm=all_gather"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ext.cp_comm") && err.contains("ring, ulysses, hybrid, search"), "{err}");
}

//! The contract of `fmperf search … --sensitivity` (issue 29 §3), run through the built binary:
//! JSON's `sensitivity` key (six features × two factors, sorted, units, a baseline equal to the
//! search's best), the CSV's one row per point, the table's section, and the combinations refused.

mod support;

use serde_json::Value;

const SMALL: &str = "search --model llama3-8b --system nvidia_h100_sxm5_80gb --gpus 64 --global-batch 512 --top 3";

fn words<'a>(line: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    line.split_whitespace().chain(extra.iter().copied()).collect()
}

#[test]
fn json_has_a_sensitivity_key_sorted_by_effect_with_the_search_as_its_baseline() {
    let doc = support::json(words(SMALL, &["--sensitivity", "--format", "json", "--threads", "2"]));
    let s = &doc["sensitivity"];
    assert_eq!(s["budget"]["unit"], "tokens");
    assert_eq!(s["budget"]["default"], false);
    // The baseline is the search's own best layout.
    assert_eq!(s["baseline"]["layout"], doc["results"][0]["code"]);
    assert_eq!(s["baseline"]["status"], "fits");
    let base_days = s["baseline"]["training_days"].as_f64().unwrap();
    let features = s["features"].as_array().unwrap();
    let keys: Vec<&str> = features.iter().map(|f| f["feature"].as_str().unwrap()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(sorted, ["domain", "hbm_bandwidth", "hbm_capacity", "matrix", "scale_out", "scale_up"]);
    // Sorted: the fewest days at either factor first.
    let best = |f: &Value| {
        f["points"].as_array().unwrap().iter().filter_map(|p| p["training_days"].as_f64()).fold(f64::INFINITY, f64::min)
    };
    assert!(features.windows(2).all(|w| best(&w[0]) <= best(&w[1])), "{keys:?}");
    for f in features {
        let points = f["points"].as_array().unwrap();
        assert_eq!(points.iter().map(|p| p["factor"].as_f64().unwrap()).collect::<Vec<_>>(), [0.5, 2.0]);
        assert!(f["unit"].is_string() && f["sweep_axis"].as_str().unwrap().starts_with(f["feature"].as_str().unwrap()));
        for p in points.iter().filter(|p| p["status"] == "fits") {
            let want = (p["training_days"].as_f64().unwrap() / base_days - 1.0) * 100.0;
            assert!((p["change_pct"].as_f64().unwrap() - want).abs() < 1e-9);
            assert!(p["device_hours"].as_f64().unwrap() > 0.0 && p["layout"].is_string());
        }
    }
    let matrix = features.iter().find(|f| f["feature"] == "matrix").unwrap();
    assert!(matrix["points"][1]["change_pct"].as_f64().unwrap() < 0.0, "twice the FLOP rate is faster");
    // Any thread count gives the same document.
    let one = support::json(words(SMALL, &["--sensitivity", "--format", "json", "--threads", "1"]));
    assert_eq!(one, doc);
}

#[test]
fn csv_is_one_row_per_point_and_the_table_a_section() {
    let csv = support::stdout(words(SMALL, &["--sensitivity", "--format", "csv"]));
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("feature,factor,value,unit,status,training days [days],change vs baseline [%]"));
    assert_eq!(lines.len(), 14, "header, baseline and 12 points");
    assert!(lines[1].starts_with("baseline,1,"));
    let table = support::stdout(words(SMALL, &["--sensitivity"]));
    assert!(table.contains("what would help most"), "{table}");
    assert!(table.contains("×0.5") && table.contains("×2") && table.contains("TFLOP/s"));
    // Without the flag, no section.
    assert!(!support::stdout(words(SMALL, &[])).contains("what would help most"));
}

#[test]
fn an_impossible_factor_says_why_and_combinations_are_refused() {
    let doc = support::json(words(
        "search --model llama3-8b --system nvidia_h100_sxm5_80gb,domain=8 --gpus 8 --global-batch 64 --sensitivity --format json",
        &[],
    ));
    let domain = doc["sensitivity"]["features"].as_array().unwrap().iter().find(|f| f["feature"] == "domain").unwrap();
    assert_eq!(domain["points"][1]["status"], "impossible");
    assert!(domain["points"][1]["reason"].as_str().unwrap().contains("changes nothing"));
    let e = support::usage_error(words("search --from x.sh --sensitivity", &[]));
    assert!(e.contains("--sensitivity"), "{e}");
    let e = support::usage_error(words(SMALL, &["--sensitivity=1"]));
    assert!(e.contains("--sensitivity takes no value"), "{e}");
}

#[test]
fn with_a_price_each_point_says_its_cost_and_the_change_in_money() {
    let extra = ["--sensitivity", "--tokens", "1e11", "--price-per-device-hour", "2", "--threads", "2"];
    let doc = support::json(words(SMALL, &[&extra[..], &["--format", "json"]].concat()));
    let s = &doc["sensitivity"];
    // The budget given with the price, not the model's.
    assert_eq!((s["budget"]["amount"].as_f64(), s["budget"]["unit"].as_str()), (Some(1e11), Some("tokens")));
    let base = &s["baseline"];
    let hours = base["device_hours"].as_f64().unwrap();
    assert!((base["cost_total"].as_f64().unwrap() / (hours * 2.0) - 1.0).abs() < 1e-12);
    // 64 devices × days × 24 h.
    assert!((hours / (64.0 * base["training_days"].as_f64().unwrap() * 24.0) - 1.0).abs() < 1e-9);
    // The table: the cost columns with their unit, the change signed; CSV the same at full precision.
    let table = support::stdout(words(SMALL, &extra));
    assert!(table.contains("cost [price × device-hours]") && table.contains("cost change vs baseline"), "{table}");
    assert!(table.contains("cost at your 2 per device-hour"), "{table}");
    let csv = support::stdout(words(SMALL, &[&extra[..], &["--format", "csv"]].concat()));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "cost [price × device-hours]").expect("cost column");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let base_cost: f64 = rows[0][at].parse().unwrap();
    assert!((base_cost / base["cost_total"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    // Twice the matrix rate costs less (a negative change); its change is its cost minus the baseline's.
    let matrix2 = rows.iter().find(|r| r[0] == "matrix" && r[1] == "2").unwrap();
    let (cost, change): (f64, f64) = (matrix2[at].parse().unwrap(), matrix2[at + 1].parse().unwrap());
    assert!(change < 0.0 && (cost - base_cost - change).abs() < 1e-6 * base_cost, "{matrix2:?}");
    // Without a price: no cost columns.
    let plain = support::stdout(words(SMALL, &["--sensitivity", "--threads", "2"]));
    assert!(!plain.contains("cost ["), "{plain}");
}

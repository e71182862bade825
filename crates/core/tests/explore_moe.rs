//! The explorer with a Mixture-of-Experts model (issue 12): its reports carry the expert layout
//! the search chose (EP, ETP, expert data parallelism) into the result row, the drill-down and the
//! exports, exactly as `fmperf search` writes them, and MFU counts the experts a token visits.

use fmperf_core::explore::export::{report_json, results_csv};
use fmperf_core::explore::{ConfigReport, ExploreSearch, ReportContext};
use fmperf_core::mode::Mode;
use fmperf_core::resolve::explorer::ExploreFields;
use fmperf_core::search::ResultRow;

fn mixtral() -> fmperf_core::resolve::explorer::ExploreSpec {
    let fields = ExploreFields {
        model: "mixtral-8x7b".into(),
        system: "nvidia_h100_sxm5_80gb".into(),
        domain: "8".into(),
        gpus: "64".into(),
        batch: "256".into(),
        strategies: "1d".into(),
        top: "8".into(),
        ..ExploreFields::default_scenario()
    };
    fields.resolve_in(&Mode::from_text(Some("extended"), Some("")).unwrap()).unwrap()
}

#[test]
fn reports_carry_the_expert_layout_of_the_search() {
    let spec = mixtral();
    let ctx = ReportContext::new(&spec).unwrap();
    let result = ExploreSearch::new(spec.clone()).unwrap().finish();
    assert!(!result.merged.is_empty());
    for r in &result.merged {
        let report = ConfigReport::of_ranked(&ctx, r);
        let x = report.experts.expect("an MoE model's report has its expert layout");
        assert_eq!(Some(x), r.experts);
        // The row every export writes is the one `fmperf search` writes for the same result.
        let row = report.row();
        let search_row = ResultRow::of(r, spec.global_batch);
        assert_eq!(row.dims, search_row.dims);
        assert_eq!(row.to_json()["config"], search_row.to_json()["config"]);
        assert_eq!((row.dims.ep, row.dims.etp, row.dims.edp), (x.ep, x.etp, Some(x.edp)));
        // Folding: ETP·EP·EDP re-splits TP·CP·DP.
        let c = report.candidate;
        assert_eq!(x.ep * x.etp * x.edp, c.tp1 * c.dp, "{c:?}");
        let names: Vec<_> = report.expert_placement().iter().map(|p| (p.name, p.degree)).collect();
        assert_eq!(names, [("EP", x.ep), ("ETP", x.etp), ("EDP", x.edp)]);
        let json = report_json(1, &report);
        assert_eq!(json["config"]["ep"], x.ep);
        assert_eq!(json["expert_placement_groups"][0]["degree"], x.ep);
    }
    // Some configuration splits the 8 experts (else the columns would say nothing).
    assert!(result.merged.iter().any(|r| r.experts.is_some_and(|x| x.ep > 1)));
    // The drill-down's evaluation chooses the same layout as the search.
    let best = result.merged[0];
    let detail = spec.evaluate_ranked(&best).unwrap();
    assert_eq!(detail.experts(), best.experts);
    assert_eq!(ConfigReport::of_detail(&ctx, &best.candidate, &detail).experts, best.experts);
    // CSV: the `ep` and `etp` columns hold the layout.
    let reports: Vec<_> = result.merged.iter().map(|r| ConfigReport::of_ranked(&ctx, r)).collect();
    let csv = results_csv(&reports);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let x = best.experts.unwrap();
    assert_eq!(first[col("ep")], x.ep.to_string());
    assert_eq!(first[col("etp")], x.etp.to_string());
}

#[test]
fn dense_reports_have_no_expert_layout() {
    let spec = ExploreFields::default_scenario().resolve().unwrap();
    let ctx = ReportContext::new(&spec).unwrap();
    let result = ExploreSearch::new(spec).unwrap().finish();
    let report = ConfigReport::of_ranked(&ctx, &result.merged[0]);
    assert_eq!(report.experts, None);
    assert!(report.expert_placement().is_empty());
    assert_eq!((report.row().dims.ep, report.row().dims.etp, report.row().dims.edp), (1, 1, None));
    assert!(report_json(1, &report).get("expert_placement_groups").is_none());
}

#[test]
fn mfu_counts_the_experts_a_token_visits() {
    // Mixtral 8x7B (catalog: 32 blocks, h 4096, 32 heads of 128 with 8 K/V heads, experts of width
    // 14336 SwiGLU, top-2, vocabulary 32000, sequence 4096). Per token and block, forward:
    // projections 2·(h·(q + 2·kv) + q·h) = 2·(4096·6144 + 4096·4096) = 83,886,080;
    // attention core 4·s·q = 4·4096·4096 = 67,108,864; experts 2·3·h·(2·14336) = 704,643,072.
    // Sum 855,638,016 × 32 blocks + logits 2·4096·32000 = 262,144,000 → 27,642,560,512;
    // × 3 (forward and backward) × 4096 tokens = 339.67 TFLOP per sample.
    let spec = mixtral();
    let ctx = ReportContext::new(&spec).unwrap();
    let want = 3.0 * (855_638_016.0 * 32.0 + 262_144_000.0) * 4096.0 * 1e-12;
    assert!((ctx.flops_per_sample_tflop / want - 1.0).abs() < 1e-12, "{} vs {want}", ctx.flops_per_sample_tflop);
}

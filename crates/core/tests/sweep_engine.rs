//! Sweeps against the search they are made of: every point equals a complete search (bit for
//! bit), restrictions equal a filtered search, shards concatenate to the whole sweep, stepping
//! in small slices gives the same result as one run, and points without a configuration say why.

use fmperf_core::resolve::sweep_axis::{Axis, AxisKey};
use fmperf_core::resolve::sweep_spec::{BatchRule, Constraints, Shard, SweepSpec};
use fmperf_core::search::{Search, SearchSpec};
use fmperf_core::sweep::{Metric, Status, Sweep, SweepText, export};
use fmperf_core::vocab::Candidate;
use fmperf_core::{ModelShape, Strategy, SystemParams};

fn text(model: &str, system: &str, axes: &[&str]) -> SweepText {
    SweepText {
        model: model.into(),
        system: system.into(),
        global_batch: Some("4096".into()),
        axes: axes.iter().map(|a| a.to_string()).collect(),
        ..SweepText::default()
    }
}

fn spec(model: &str, system: &str, axes: &[&str]) -> SweepSpec {
    text(model, system, axes).to_spec(None, None).unwrap()
}

#[test]
fn points_equal_complete_searches() {
    let s = spec("gpt3_1T", "H200", &["nvlink=4,64", "gpus=256..2048"]);
    let r = Sweep::new(s).unwrap().finish();
    assert_eq!(r.points.len(), 8);
    for p in &r.points {
        let i = p.inputs.as_ref().unwrap();
        let mut best: Option<(f64, Strategy)> = None;
        for strategy in Strategy::ALL {
            let spec = SearchSpec {
                model: ModelShape::GPT3_1T,
                system: SystemParams::h200().with_domain_size(i.params.domain_size),
                strategy,
                n_gpus: i.devices,
                global_batch: 4096,
                top_k: 1,
            };
            let found = Search::new(spec).unwrap().finish();
            let mine = p.strategy(strategy).unwrap();
            assert_eq!(mine.candidates, found.candidates, "{strategy} at {}", i.devices);
            assert_eq!(mine.feasible, found.feasible);
            assert_eq!(mine.best.map(|b| b.candidate), found.top.first().map(|b| b.candidate));
            assert_eq!(
                mine.best.map(|b| b.throughput_samples_per_s),
                found.top.first().map(|b| b.throughput_samples_per_s)
            );
            if let Some(t) = found.top.first() {
                if best.is_none_or(|(x, _)| t.throughput_samples_per_s > x) {
                    best = Some((t.throughput_samples_per_s, strategy));
                }
            }
        }
        let b = p.best.as_ref().unwrap();
        assert_eq!(Some((b.ranked.throughput_samples_per_s, b.strategy)), best);
        // Days on the model's budget: 1e12 tokens of 2048.
        assert_eq!(b.days, 1e12 / 2048.0 / b.ranked.throughput_samples_per_s / 86400.0);
    }
}

#[test]
fn restrictions_equal_a_filtered_search_and_share_one_pass() {
    let s = spec("gpt3_1T", "B200", &["pp=8..32", "tp=2..8"]);
    let mut s = s;
    s.base.strategies = vec![Strategy::OneD];
    s.base.devices = 1024;
    s.base.domain_size = Some(8);
    let sweep = Sweep::new(s.clone()).unwrap();
    let (_, total) = {
        let mut probe = sweep.clone();
        probe.step(1 << 30);
        probe.progress()
    };
    let r = sweep.finish();
    // One pass over the 1D space serves all nine (tp, pp) cells.
    let space = Search::new(SearchSpec {
        model: ModelShape::GPT3_1T,
        system: SystemParams::b200().with_domain_size(8),
        strategy: Strategy::OneD,
        n_gpus: 1024,
        global_batch: 4096,
        top_k: 1,
    })
    .unwrap();
    assert_eq!(total, space.space().len());
    let sys = SystemParams::b200().with_domain_size(8);
    for p in &r.points {
        let c = p.inputs.as_ref().unwrap().constraints;
        let (tp, pp) = (c.tp.unwrap(), c.pp.unwrap());
        let mut best: Option<(f64, Candidate)> = None;
        let mut count = 0;
        for cand in space.space().iter().filter(|x| x.tp() == tp && x.pp == pp) {
            count += 1;
            let ev = fmperf_core::reference::evaluate(&ModelShape::GPT3_1T, &sys, 4096, &cand).unwrap();
            if ev.feasible && best.is_none_or(|(t, _)| ev.throughput_samples_per_s > t) {
                best = Some((ev.throughput_samples_per_s, cand));
            }
        }
        assert_eq!(p.candidates(), count, "tp {tp} pp {pp}");
        match best {
            Some((t, cand)) => {
                let b = p.best.as_ref().unwrap();
                assert_eq!((b.ranked.throughput_samples_per_s, b.ranked.candidate), (t, cand));
            }
            None => assert_ne!(p.status, Status::Ok),
        }
    }
}

#[test]
fn shards_concatenate_to_the_whole_sweep() {
    let s = spec("vit_era5", "B200", &["nvlink=8,64", "gpus=16..256"]);
    let whole = Sweep::new(s.clone()).unwrap().finish();
    let axes = &s.axes;
    let csv = export::to_csv(axes, &whole.points, true);
    let jsonl = export::to_json_lines(axes, &whole.points);
    for n in [1, 2, 3, 4, 7, 10, 13] {
        let mut csv_parts = String::new();
        let mut json_parts = String::new();
        for i in 0..n {
            let part = Sweep::shard(s.clone(), Shard { index: i, count: n }).unwrap().finish();
            csv_parts.push_str(&export::to_csv(axes, &part.points, i == 0));
            json_parts.push_str(&export::to_json_lines(axes, &part.points));
        }
        assert_eq!(csv_parts, csv, "{n} shards");
        assert_eq!(json_parts, jsonl, "{n} shards");
    }
    assert_eq!(csv.lines().count(), 1 + 10);
    assert_eq!(Shard::parse("3/4").unwrap(), Shard { index: 3, count: 4 });
    for bad in ["4/4", "1", "a/2", "0/0", "-1/3"] {
        assert_eq!(Shard::parse(bad).unwrap_err().field(), Some("shard"), "{bad}");
    }
}

#[test]
fn small_steps_give_the_same_result_and_progress_is_exact() {
    let s = spec("gpt3_1T", "A100", &["nvlink=4,8", "gpus=64..512"]);
    let once = Sweep::new(s.clone()).unwrap().finish();
    let mut sweep = Sweep::new(s).unwrap();
    let mut last = 0;
    let mut steps = 0;
    while !sweep.step(977) {
        let (done, total) = sweep.progress();
        assert!(done >= last && done <= total);
        last = done;
        steps += 1;
    }
    let (done, total) = sweep.progress();
    assert_eq!(done, total);
    assert_eq!(total, once.candidates);
    assert!(steps > 10);
    assert_eq!(sweep.finish().points, once.points);
}

#[test]
fn points_without_a_configuration_say_why() {
    let s = spec("gpt3_1T", "A100", &["gpus=4,6,256"]);
    let r = Sweep::new(s).unwrap().finish();
    assert_eq!(r.points[0].status, Status::OutOfMemory);
    let why = r.points[0].reason.as_deref().unwrap();
    assert!(why.contains("nothing fits in memory") && why.contains("80.0 GB"), "{why}");
    // 6 devices: no split of 160 heads, 128 blocks and 4096 samples uses exactly 6 with a domain of 4.
    assert_eq!(r.points[1].status, Status::NoConfiguration, "{:?}", r.points[1].reason);
    assert_eq!(r.points[2].status, Status::Ok);

    // Weight sparsity: the reference model cannot express it.
    let r = Sweep::new(spec("gpt3_1T", "B200", &["sparsity=0,0.5", "gpus=512"])).unwrap().finish();
    assert_eq!(r.points[0].status, Status::Ok);
    assert_eq!(r.points[1].status, Status::Unsupported);
    assert!(r.points[1].reason.as_deref().unwrap().contains("not in the reference model"));

    // Precision on a 16-bit reference system file, and a system missing a catalog value.
    let r = Sweep::new(spec("gpt2-xl", "A100", &["precision=fp32,bf16", "gpus=8"])).unwrap().finish();
    assert_eq!(r.points[0].status, Status::Invalid);
    assert!(r.points[0].reason.as_deref().unwrap().contains("16-bit"), "{:?}", r.points[0].reason);
    assert_eq!(r.points[1].status, Status::Ok);
    // A system without a scale-out bandwidth works inside one scale-up domain, not beyond. (Every
    // GPU of the catalog now lists its NICs; SambaNova's SN40L publishes none, so it serves here,
    // with its unpublished vector rate and RDU-to-RDU bandwidth given as the spec allows.)
    let sn40l = "sambanova_sn40l,vector=50,scale_up=100";
    let r = Sweep::new(spec("gpt2-xl", sn40l, &["gpus=16,32"])).unwrap().finish();
    assert_eq!(r.points[0].status, Status::Ok, "{:?}", r.points[0].reason);
    assert!(r.points[0].inputs.as_ref().unwrap().notes.iter().any(|n| n.contains("one scale-up domain of 16")));
    assert_eq!(r.points[1].status, Status::Invalid);
    assert!(r.points[1].reason.as_deref().unwrap().contains("scale-out"), "{:?}", r.points[1].reason);
    // … unless the user gives one, as in every command's system spec.
    let given = spec("gpt2-xl", &format!("{sn40l},scale_out=50"), &["gpus=16,32"]);
    assert_eq!(SweepText::from_spec(&given).system, format!("{sn40l},scale_out=50"));
    let r = Sweep::new(given).unwrap().finish();
    assert!(r.points.iter().all(|p| p.status == Status::Ok), "{:?}", r.points[1].reason);
    assert_eq!(r.points[1].inputs.as_ref().unwrap().params.ib_bandwidth, 50.0);
    // Gaudi 2 runs with its estimated vector rate, labelled; a TPU (no vector rate published) does
    // not run in reference mode and says why.
    let r = Sweep::new(spec("gpt2-xl", "intel_gaudi2", &["gpus=8"])).unwrap().finish();
    assert_eq!(r.points[0].status, Status::Ok, "{:?}", r.points[0].reason);
    assert!(r.points[0].inputs.as_ref().unwrap().notes.iter().any(|n| n.contains("estimate")));
    let r = Sweep::new(spec("gpt2-xl", "google_tpu_v5e", &["gpus=8"])).unwrap().finish();
    assert_eq!(r.points[0].status, Status::Invalid);
    assert!(r.points[0].reason.as_deref().unwrap().contains("vector"), "{:?}", r.points[0].reason);
}

#[test]
fn parameter_axes_scale_the_mapped_system() {
    let s = spec("gpt3_1T", "B200-next", &["hbm_capacity=x0.5,x1,768", "hbm_bandwidth=x2", "gpus=1024"]);
    let r = Sweep::new(s).unwrap().finish();
    let caps: Vec<f64> = r.points.iter().map(|p| p.inputs.as_ref().unwrap().params.hbm_capacity).collect();
    assert_eq!(caps, [192.0, 384.0, 768.0]);
    assert!(r.points.iter().all(|p| p.inputs.as_ref().unwrap().params.hbm_bandwidth == 32000.0));
    // More capacity never makes the best configuration slower.
    let days: Vec<f64> = r.points.iter().filter_map(|p| Metric::Days.value(p)).collect();
    assert!(days.windows(2).all(|w| w[1] <= w[0]), "{days:?}");
}

#[test]
fn accumulation_steps_are_microbatches_per_iteration() {
    // Fixed global batch: accum = a keeps configurations with G/(dp·mbs) = a.
    let mut s = spec("gpt2-xl", "nvidia_a100_sxm4_40gb", &["accum=4,16,64"]);
    s.base.devices = 16;
    s.base.global_batch = 256;
    s.fixed = Constraints { tp: Some(1), ..Constraints::default() };
    let r = Sweep::new(s).unwrap().finish();
    for (p, a) in r.points.iter().zip([4, 16, 64]) {
        let b = p.best.as_ref().unwrap_or_else(|| panic!("{a}: {:?}", p.reason));
        assert_eq!(b.ranked.candidate.microbatches(256), a);
        assert_eq!(p.inputs.as_ref().unwrap().global_batch, 256);
    }
    // Per-device batch: accumulation multiplies the global batch (G = b·devices·a).
    let mut s = spec("gpt2-xl", "nvidia_a100_sxm4_40gb", &["accum=1,2,4"]);
    s.base.devices = 64;
    s.batch = BatchRule::PerDevice(1);
    s.fixed = Constraints { tp: Some(1), mbs: Some(1), ..Constraints::default() };
    let r = Sweep::new(s).unwrap().finish();
    let gs: Vec<u64> = r.points.iter().map(|p| p.inputs.as_ref().unwrap().global_batch).collect();
    assert_eq!(gs, [64, 128, 256]);
    let t: Vec<f64> = r.points.iter().map(|p| Metric::Throughput.value(p).unwrap()).collect();
    assert!(t[0] < t[1] && t[1] < t[2], "{t:?}");
    for p in &r.points {
        let c = p.best.as_ref().unwrap().ranked.candidate;
        assert_eq!((c.dp, c.pp, c.tp(), c.mbs), (64, 1, 1, 1));
    }
}

#[test]
fn bad_specs_name_the_axis() {
    let t = |axes: &[&str]| text("gpt3_1T", "B200", axes).to_spec(None, None).unwrap_err();
    assert_eq!(t(&["gpus=4", "gpus=8"]).field(), Some("axis.gpus"));
    assert_eq!(t(&["hbm_bandwidth=fast"]).field(), Some("axis.hbm_bandwidth"));
    assert_eq!(t(&["warp=9"]).field(), Some("axis"));
    let mut bad = text("gpt3_1T", "B200", &[]);
    bad.fix = Some("zz=1".into());
    assert_eq!(bad.to_spec(None, None).unwrap_err().field(), Some("fix"));
    bad.fix = None;
    bad.per_device_batch = Some("2".into());
    assert_eq!(bad.to_spec(None, None).unwrap_err().field(), Some("per-device-batch"));
    assert!(AxisKey::parse("nvlink_size").is_ok());
    assert_eq!(Axis::parse("gpus=1..8").unwrap().values.len(), 4);
}

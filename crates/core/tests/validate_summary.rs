//! Validation against the shipped measured runs: the targets of extended mode, a pin of both modes'
//! summaries (so that any change of the model that moves them is seen and the pins updated on
//! purpose), the fit reproducing the shipped constants, and every skipped row carrying its reason.

use fmperf_core::extended::efficiency::Efficiency;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{Report, fit_efficiency, shipped_runs, validate};

fn close(got: Option<f64>, want: f64, what: &str) {
    let g = got.unwrap_or(f64::NAN);
    assert!((g - want).abs() < 1e-9, "{what}: got {g:?}, pinned {want} — update the pin only if the change is meant");
}

fn report(mode: ModeKind) -> Report {
    let f = shipped_runs();
    assert_eq!(f.rows.len(), 108, "the shipped file has 108 rows");
    validate(&f, mode)
}

/// In-sample targets of extended mode on the shipped runs: mean |error| ≤ 12 %, no source's
/// median beyond ±15 %. (Until the attention kernel was read per run, NeMo's long-sequence runs
/// needed a wider bound, 25 %: one `η_att` had to serve cuDNN's and PyTorch SDPA's kernels.)
#[test]
fn extended_mode_meets_its_targets() {
    let r = report(ModeKind::Extended);
    let s = &r.summary.overall;
    assert!(s.mape.unwrap() <= 0.12, "mean absolute error {:?}", s.mape);
    for p in &r.summary.per_source {
        if let Some(m) = p.stats.median_error {
            assert!(m.abs() <= 0.15, "{}: median error {m}", p.source);
        }
    }
}

/// Issue 16's targets, leave-one-source-out (each source predicted with constants fitted without
/// it), read from the shipped cache that `holdout_cache` proves equal to a fresh computation:
/// mean |error| ≤ 12 % and no source's median beyond ±15 %.
#[test]
fn extended_mode_meets_its_targets_on_runs_it_has_not_seen() {
    let h = fmperf_core::validate::holdout_cache::shipped_holdout(ModeKind::Extended).expect("the cache parses");
    assert_eq!(h.leave_one_source_out.evaluated, 103);
    let loso = h.leave_one_source_out.mape.unwrap();
    assert!(loso <= 0.12, "leave-one-source-out mean |error| {loso}");
    assert!(loso >= h.in_sample.mape.unwrap() - 1e-12, "held out cannot beat in-sample on the whole");
    for p in &h.per_source {
        let m = p.leave_one_source_out.median_error.unwrap();
        assert!(m.abs() <= 0.15, "{}: held-out median error {m}", p.source);
    }
}

/// Pins moved on purpose (issue 16 §3): sequence parallelism shards every kept activation,
/// Megatron's backward overlaps of the column-parallel input-gradient collectives, FP32 gradient
/// reduction for BF16 training, ceilings that never mix precisions, FP8 weight-cast traffic, the
/// GEMM-size and attention sequence-size factors, and the constants refitted with them
/// (η 1.0, η_att 0.412, c 512, c_att 1024).
///
/// Moved again (catalog, issue 16 §2): the 96 GB H100 (500 W) gets estimated peaks and matmul
/// ceilings (the H100 SXM5's × 0.922 for the power limit) and TPU v4 a DCN figure, so 17 torchtitan
/// and 6 more MaxText rows are evaluated (103 instead of 80); the reader places a run on its
/// slices (MaxText v4 52B on 2 slices: −58 % → +10 %) and reads FSDP with a pipeline as one
/// gather and one reduce-scatter per iteration (torchtitan 405B 1F1B: −24 % → +55 % before the
/// refit; the per-micro-batch gathers had hidden how optimistic the rest is). Refitted on the 103
/// rows: η 1.0, η_att 0.304, c 512, c_att 1024.
///
/// Moved again (kernel fusion): the reader takes torchtitan's "FSDP eager" rows as eager PyTorch
/// (`fusion=eager`: unfused norms, RoPE and SwiGLU, 3.5× the element-wise HBM traffic of the fused
/// block), so those two rows come out +22 % and +24 % instead of +39 % and +35 %, next to their
/// compiled twins (+20 %, +16 %); mean |error| 11.4 % → 11.2 %, torchtitan's 18.4 % → 16.8 %
/// (its median, a compiled long-context row, is unchanged). The refit keeps the constants.
///
/// Moved again (attention kernel): each run's attention kernel is read from its words
/// (torchtitan and llm-foundry → FlashAttention-2 class, at 0.62 of the own-generation kernel's
/// rate on H100; others native), and the constants refitted: η 0.99, η_att 0.41 (c 512,
/// c_att 1024). Mean |error| 11.2 % → 8.1 %; NeMo long-sequence 22.4 % → 2.8 % (median −23 % →
/// −1.6 %), torchtitan 16.8 % → 12.3 % (+18 % → +2.0 %), MosaicML 11.5 % → 7.0 %, NeMo summary
/// 9.1 % → 7.1 %, Narayanan 6.6 % → 7.6 % (η 1.0 → 0.99), Korthikanti 5.4 % → 5.6 %.
///
/// Moved again (issue 31 §1): collectives carry NCCL's own latency model (per call and per step
/// by tier, ring or tree, the protocol of least time), a block pass lasts at least its kernels'
/// issue time, Megatron-LM rows (Narayanan) reduce their gradients after the backward
/// (`dp_overlap=off`, Megatron-LM's default), and torchtitan's pipelines take its default of one
/// micro-batch per stage (405B 1F1B: +44 % → −0.5 %; interleaved +24 % → +18 %). Refitted:
/// η 0.999, η_att 0.41 (c 512, c_att 1024). Mean |error| 8.1 % → 7.4 %; Narayanan 7.6 % →
/// 6.7 %, torchtitan 12.3 % → 9.4 %, Korthikanti 5.6 % → 5.3 %, NeMo summary 7.1 % → 7.3 %.
///
/// Moved again (issue 32, attention kernel measured): flash attention runs at `η_att` times the
/// FlashAttention-3 paper's kernel benchmark by sequence length (cuDNN, or FlashAttention-2 for
/// FA2-class kernels on Hopper), causal tiles counted, instead of `η_att` times the ceiling.
/// Refitted: η 1.0, η_att 0.615 of the benchmark (c 512, c_att 1024). Mean |error| 7.45 % →
/// 7.45 % (leave-one-source-out 9.1 % → 8.7 %); Narayanan 6.7 % → 6.3 %, NeMo long-sequence
/// 2.8 % → 2.6 %, MosaicML 7.0 % → 7.7 %, MaxText 10.0 % → 9.8 %, the others within 0.1 point.
///
/// Moved again (issue 31, interleaved bubble): the interleaved schedule's warm-up and cool-down
/// wait for their exchanges (Megatron-LM's `schedules.py`), so the bubble's slots carry all `2v`
/// messages (`extended::pipeline::bubble_s`). Constants kept. Mean |error| 7.450 % → 7.453 %
/// (leave-one-source-out 8.678 % → 8.678 %); Narayanan 6.35 % → 6.35 %, Korthikanti 5.32 % →
/// 5.34 %, torchtitan 9.46 % → 9.45 %, NeMo summary 7.29 % → 7.29 %.
///
/// Moved again (issue 31, FSDP across nodes): PyTorch FSDP's per-unit gathers and reductions
/// cross nodes through every NIC of a node; only DeepSpeed's ZeRO-3 (Narayanan's rows) keeps one
/// NIC per device (`Stack::zero3_one_nic_per_device`). η_att refitted 0.615 → 0.613 (the test below: the fit reproduces the shipped constants).
/// Mean |error| 7.453 % → 7.243 % (leave-one-source-out 8.678 % → 8.721 %); MosaicML 7.72 % →
/// 6.18 % (MPT 3B on 64 H100 −23.7 % → −0.1 %), torchtitan 9.45 % → 9.80 % (FSDP over 128 H100
/// +16 % → +19 %), the others unchanged.
#[test]
fn extended_summary_is_pinned() {
    let r = report(ModeKind::Extended);
    assert_eq!(r.efficiency, Efficiency::FITTED);
    let s = &r.summary.overall;
    assert_eq!((s.evaluated, s.skipped), (103, 5));
    close(s.mape, 0.07242733399163767, "extended mean |error|");
    close(s.median_abs_error, 0.053277509484792374, "extended median |error|");
    close(s.median_error, -0.0023516115589334863, "extended median error");
    let pinned = [
        ("Narayanan", 22, 0.06344178292605462, 0.0043093048454594385),
        ("Korthikanti", 8, 0.05347909230906324, 0.03455717990268492),
        ("NVIDIA NeMo performance summary", 12, 0.07302847804959976, -0.060254480099821595),
        ("NVIDIA NeMo long-sequence", 8, 0.026873662975091722, -0.013591873599877291),
        ("MosaicML", 18, 0.06202648148398669, -0.012826095945095928),
        ("PyTorch torchtitan", 17, 0.097503260686053, 0.01671564052084329),
        ("Google MaxText", 18, 0.09839446108457645, -0.005926013681819886),
    ];
    for (prefix, n, mape, median) in pinned {
        let p = r.summary.per_source.iter().find(|p| p.source.starts_with(prefix)).expect(prefix);
        assert_eq!(p.stats.evaluated, n, "{prefix}");
        close(p.stats.mape, mape, prefix);
        close(p.stats.median_error, median, prefix);
    }
}

/// Moved on purpose (catalog, issue 16 §2): the 96 GB H100's estimated peaks and vector rates
/// let reference mode evaluate 11 torchtitan rows (79 instead of 68).
#[test]
fn reference_summary_is_pinned() {
    let r = report(ModeKind::Reference);
    let s = &r.summary.overall;
    assert_eq!((s.evaluated, s.skipped), (79, 29));
    close(s.mape, 0.7290016102282371, "reference mean |error|");
    close(s.median_abs_error, 0.5041744778193298, "reference median |error|");
    // The published model is too optimistic on most rows.
    assert!(s.mean_error.unwrap() > 0.5);
}

#[test]
fn every_row_is_evaluated_or_has_a_reason() {
    for mode in [ModeKind::Reference, ModeKind::Extended] {
        let r = report(mode);
        for row in &r.rows {
            match row.error {
                Some(e) => {
                    assert!(!row.skipped && row.reason.is_none() && e.is_finite(), "{}", row.id);
                    let (p, m) = (row.predicted.unwrap(), row.measured.unwrap());
                    assert!((e - (p / m - 1.0)).abs() < 1e-12);
                    assert!(row.predicted_step_s.unwrap() > 0.0 && row.measured_step_s.unwrap() > 0.0);
                }
                None => assert!(row.skipped && row.reason.as_deref().is_some_and(|s| !s.is_empty()), "{}", row.id),
            }
        }
    }
    // The reasons extended mode gives: no model shape, no batch with a pipeline. Since the 96 GB
    // H100 and TPU v4 have their (estimated) figures, no row lacks a catalog figure.
    let r = report(ModeKind::Extended);
    let reason = |id: &str| r.rows.iter().find(|x| x.id == id).unwrap().reason.clone().unwrap_or_default();
    assert!(reason("megatron_v1_v100_1p2b").contains("model shape not stated"));
    assert!(reason("nemo_longseq_llama2_7b_8k").contains("global batch absent"));
    for id in ["torchtitan_t1_fsdp", "maxtext_v4_22b_64x1"] {
        assert!(reason(id).is_empty(), "{id}: {}", reason(id));
    }
}

#[test]
fn the_fit_reproduces_the_shipped_constants() {
    assert_eq!(fit_efficiency(&shipped_runs()), Efficiency::FITTED);
}

//! Ranking as a measure: does fmperf put the layouts of one job in the measured order, and how
//! much slower than the measured best is the layout it ranks first?
//!
//! **Groups.** Rows of one job that differ in their parallel layout: a layout sweep's group
//! (`layout_group`, [`super::layout_sweeps`]), else the rows of one source that share the model
//! (shape, sequence length, vocabulary), the part (with the mapping the row gives it), the
//! precision (both as priced and as the row states it: FP8 with per-tensor scales and MXFP8 are
//! priced alike but are different recipes, not layouts of one job), the device count and the
//! global batch, and state at least two different layouts.
//! A group is ranked when at least two of its runs have a measured and a predicted throughput.
//!
//! **Measures**, per group, on the runs that ran and were evaluated (throughput in tokens/s per
//! device: with the device count and global batch fixed, the order of 1 / step time):
//! * Kendall's tau-b between predicted and measured throughput ([`kendall_tau_b`]: ties in
//!   either order counted as tau-b does; predictions within a relative 1e-9 are ties);
//! * top-1 regret: the measured throughput of the measured-best run over that of the run fmperf
//!   ranks first, minus one (0 = it picks the best; 0.25 = its pick is 25 % slower). fmperf's pick
//!   is the highest predicted throughput among the runs it does not call "does not fit" (the
//!   explorer never offers those; all runs when it calls every one "no"); among predictions it
//!   cannot tell apart (a tie) the pick is the slowest of them measured (it has no reason to
//!   prefer the faster);
//! * runs that ran and that fmperf calls "does not fit" (memory verdict `no`);
//! * whether fmperf's first among every run of the group, the failed ones included, is a run
//!   that ran out of memory while fmperf says it fits.
//!
//! Per source and overall: the mean tau over the ranked groups with a defined tau, the median,
//! mean and largest regret, the groups where the pick is the measured best, and the runs that
//! ran called "does not fit".

use super::compare::{Report, RowResult};
use super::row::interpret;
use super::schema::{MeasuredFile, MeasuredRun};
use crate::catalog::Precision;
use crate::extended::efficiency::median;
use crate::vocab::Fits;

/// Relative difference below which two predictions are a tie.
const TIE: f64 = 1e-9;

/// One run of a ranked group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RankedRun {
    /// Row id.
    pub id: String,
    /// The configuration evaluated, in one line.
    pub config: Option<String>,
    /// Measured throughput [tokens/s per device] (`null`: did not run or not evaluated).
    pub measured: Option<f64>,
    /// Predicted throughput [tokens/s per device].
    pub predicted: Option<f64>,
    /// 1 = fastest measured (ties share a rank).
    pub measured_rank: Option<usize>,
    /// 1 = fastest predicted among the runs with a prediction (ties share a rank).
    pub predicted_rank: Option<usize>,
    /// fmperf's memory verdict (`yes`, `tight`, `no`), when the row states an outcome.
    pub fits: Option<&'static str>,
    /// The source says the run ran out of memory.
    pub oom: bool,
}

/// The ranking of one group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GroupRanking {
    /// The group: a sweep's id, or the shared model, part, devices and batch in words.
    pub group: String,
    /// Source title.
    pub source: String,
    /// Runs that ran with both throughputs (the ones ranked).
    pub ranked: usize,
    /// Kendall's tau-b of predicted against measured throughput (`null`: undefined, every
    /// prediction or every measurement tied).
    pub tau: Option<f64>,
    /// Top-1 regret (0.25 = fmperf's pick is 25 % slower than the measured best).
    pub regret: Option<f64>,
    /// The measured-best run.
    pub measured_best: Option<String>,
    /// The run fmperf ranks first among the ranked runs.
    pub predicted_best: Option<String>,
    /// The measured rank of fmperf's pick (1 = the best).
    pub pick_measured_rank: Option<usize>,
    /// Runs that ran and that fmperf calls "does not fit".
    pub ran_called_no: Vec<String>,
    /// fmperf's first among all the group's runs (failed ones included) ran out of memory.
    pub pick_ran_out_of_memory: bool,
    /// Ranked runs fmperf cannot tell from its pick: predicted within the band between layouts
    /// ([`super::layout_band::LAYOUT_BAND`]) of the pick's throughput, the pick included.
    pub within_band: usize,
    /// Whether the measured best is among them (a user trying those would find it).
    pub best_within_band: bool,
    /// Every run of the group, in file order.
    pub runs: Vec<RankedRun>,
}

/// Ranking statistics of a set of groups.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct RankingStats {
    /// Groups ranked.
    pub groups: usize,
    /// Groups with a defined tau.
    pub groups_with_tau: usize,
    /// Mean Kendall tau-b over those.
    pub tau_mean: Option<f64>,
    /// Median top-1 regret.
    pub regret_median: Option<f64>,
    /// Mean top-1 regret.
    pub regret_mean: Option<f64>,
    /// Largest top-1 regret.
    pub regret_max: Option<f64>,
    /// Groups where fmperf's pick is the measured best.
    pub top1_hits: usize,
    /// Runs that ran and that fmperf calls "does not fit".
    pub ran_called_no: usize,
    /// Groups where the measured best is within the band of fmperf's pick.
    pub best_within_band: usize,
}

impl RankingStats {
    /// The statistics of `groups`.
    pub fn of(groups: &[&GroupRanking]) -> RankingStats {
        let taus: Vec<f64> = groups.iter().filter_map(|g| g.tau).collect();
        let mut regrets: Vec<f64> = groups.iter().filter_map(|g| g.regret).collect();
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        RankingStats {
            groups: groups.len(),
            groups_with_tau: taus.len(),
            tau_mean: mean(&taus),
            regret_mean: mean(&regrets),
            regret_max: regrets.iter().copied().reduce(f64::max),
            regret_median: median(&mut regrets),
            top1_hits: groups.iter().filter(|g| g.pick_measured_rank == Some(1)).count(),
            ran_called_no: groups.iter().map(|g| g.ran_called_no.len()).sum(),
            best_within_band: groups.iter().filter(|g| g.best_within_band).count(),
        }
    }
}

/// One source's ranking statistics.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SourceRanking {
    /// Source title.
    pub source: String,
    /// Its statistics.
    #[serde(flatten)]
    pub stats: RankingStats,
}

/// The ranking of a validation: per group, per source (in file order) and overall.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Ranking {
    /// Every ranked group, in file order of its first row.
    pub groups: Vec<GroupRanking>,
    /// Per source.
    pub per_source: Vec<SourceRanking>,
    /// Over every group.
    pub overall: RankingStats,
}

/// Kendall's tau-b of `x` against `y` (pairs by index): `(C − D) / √((n₀ − n_x)(n₀ − n_y))` with
/// `C`/`D` the concordant/discordant pairs, `n₀` all pairs, `n_x`/`n_y` the pairs tied in `x`/`y`
/// (values within a relative [`TIE`] are tied). `None` with fewer than two pairs or when either
/// side is all ties.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    let sign = |a: f64, b: f64| {
        if (a - b).abs() <= TIE * a.abs().max(b.abs()) {
            0
        } else if a < b {
            -1
        } else {
            1
        }
    };
    let (mut s, mut n0, mut nx, mut ny) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..n {
        for j in i + 1..n {
            let (dx, dy) = (sign(x[i], x[j]), sign(y[i], y[j]));
            n0 += 1;
            nx += i64::from(dx == 0);
            ny += i64::from(dy == 0);
            s += dx * dy;
        }
    }
    let denominator = ((n0 - nx) as f64 * (n0 - ny) as f64).sqrt();
    (n0 > 0 && denominator > 0.0).then(|| s as f64 / denominator)
}

/// Competition ranks (1 = largest; ties within [`TIE`] share the rank).
fn ranks(values: &[Option<f64>]) -> Vec<Option<usize>> {
    values
        .iter()
        .map(|v| {
            v.map(|v| {
                1 + values.iter().flatten().filter(|w| **w > v && (**w - v).abs() > TIE * w.abs().max(v.abs())).count()
            })
        })
        .collect()
}

/// Which rows form one group: those naming the same layout group of one source, or (rows that
/// name none) the same source, model, part, mapping, precision, devices and global batch.
#[derive(Clone, PartialEq, Eq, Hash)]
enum GroupKey {
    /// The file's own group name, within its source.
    Named { source: String, group: String },
    /// The group derived from the row ([`derived_key`]).
    Derived(Box<DerivedKey>),
}

/// What a row that names no layout group is grouped by (floats by their bits).
#[derive(Clone, PartialEq, Eq, Hash)]
struct DerivedKey {
    source: String,
    system: String,
    /// Scale-out and scale-up bandwidth [GB/s] (bits), domain size, NICs per device.
    mapping: (Option<u64>, Option<u64>, Option<u64>, Option<u64>),
    precision: Precision,
    /// The precision as the row states it ([`stated_precision`]).
    stated_precision: String,
    /// Layers, hidden, heads, K/V heads, MLP width, sequence length, devices, global batch.
    sizes: [u64; 8],
    vocab: Option<u64>,
    gated_mlp: bool,
}

/// The group key of a row that names no layout group: its source, model, part, precision (as
/// priced and as stated: [`stated_precision`]), devices and global batch, with a name in words
/// (`None` when the row cannot be read).
fn derived_key(run: &MeasuredRun) -> Option<(GroupKey, String)> {
    let setup = interpret(run).ok()?;
    let w = &setup.workload;
    let l = &setup.layout;
    let m = &setup.mapping;
    let key = GroupKey::Derived(Box::new(DerivedKey {
        source: run.source.clone(),
        system: setup.system.id.clone(),
        mapping: (
            m.scale_out_gbps.map(f64::to_bits),
            m.scale_up_gbps.map(f64::to_bits),
            m.domain_size,
            m.nics_per_device,
        ),
        precision: setup.options.hardware.precision,
        stated_precision: stated_precision(run),
        sizes: [w.layers, w.hidden, w.heads, w.kv_heads, w.ffn_hidden, w.seq_len, l.devices(), l.global_batch],
        vocab: w.vocab,
        gated_mlp: w.gated_mlp,
    }));
    let model = run.model.name.clone().unwrap_or_else(|| format!("L{} h{}", w.layers, w.hidden));
    let priced = setup.options.hardware.precision.to_string();
    let stated = stated_precision(run);
    // A recipe's one-word name where the row gives one (`mxfp8`); else the priced precision, so
    // that "fp16 mixed (loss scaling)" does not stretch the group's name.
    let precision = if stated.is_empty() || stated.contains(char::is_whitespace) { priced } else { stated };
    let name = format!(
        "{model} on {} × {} ({precision}), global batch {} × {}",
        l.devices(),
        setup.system.id,
        l.global_batch,
        w.seq_len
    );
    Some((key, name))
}

/// The precision a row states, in lower case without surrounding blanks (`""` when it states
/// none): `mxfp8` and `fp8` are both priced as FP8, and a group holds one of them.
fn stated_precision(run: &MeasuredRun) -> String {
    run.precision.as_deref().map(|p| p.trim().to_lowercase()).unwrap_or_default()
}

/// The ranking of a validated file: `report` is the validation of `file` (its rows in file order).
pub fn ranking(file: &MeasuredFile, report: &Report) -> Ranking {
    // Group the rows: (key, name, source, row indices).
    // In the order of their first row; `index` finds a key's group in one lookup (a linear search
    // made 10,000 rows quadratic).
    let mut groups: Vec<(String, String, Vec<usize>)> = Vec::new();
    let mut index: std::collections::HashMap<GroupKey, usize> = std::collections::HashMap::new();
    for (i, run) in file.rows.iter().enumerate() {
        let (key, name) = match &run.layout_group {
            Some(g) => (GroupKey::Named { source: run.source.clone(), group: g.clone() }, g.clone()),
            None => match derived_key(run) {
                Some(k) => k,
                None => continue,
            },
        };
        match index.get(&key) {
            Some(&g) => groups[g].2.push(i),
            None => {
                index.insert(key, groups.len());
                groups.push((name, run.source.clone(), vec![i]));
            }
        }
    }
    let mut ranked = Vec::new();
    for (name, source, row_indices) in groups {
        let rows: Vec<&RowResult> = row_indices.iter().filter_map(|i| report.rows.get(*i)).collect();
        // The report's rows are the file's, in file order: a group is explicit when its first row
        // names its layout group.
        let explicit = row_indices.first().and_then(|i| file.rows.get(*i)).is_some_and(|f| f.layout_group.is_some());
        let mut configs: Vec<&str> = rows.iter().filter_map(|r| r.config.as_deref()).collect();
        crate::sort::sort(&mut configs);
        configs.dedup();
        if !explicit && configs.len() < 2 {
            continue;
        }
        if let Some(g) = rank_group(name, source, &rows) {
            ranked.push(g);
        }
    }
    let mut sources: Vec<String> = Vec::new();
    for g in &ranked {
        if !sources.contains(&g.source) {
            sources.push(g.source.clone());
        }
    }
    let per_source = sources
        .into_iter()
        .map(|s| {
            let of: Vec<&GroupRanking> = ranked.iter().filter(|g| g.source == s).collect();
            SourceRanking { stats: RankingStats::of(&of), source: s }
        })
        .collect();
    let overall = RankingStats::of(&ranked.iter().collect::<Vec<_>>());
    Ranking { groups: ranked, per_source, overall }
}

/// The ranking of one group's rows (`None` with fewer than two ranked runs).
pub fn rank_group(group: String, source: String, rows: &[&RowResult]) -> Option<GroupRanking> {
    let ran = |r: &RowResult| r.memory.as_ref().is_none_or(|m| m.oom != Some(true));
    let verdict = |r: &RowResult| r.memory.as_ref().and_then(|m| m.fits);
    let measured: Vec<Option<f64>> =
        rows.iter().map(|r| r.measured_tokens_per_s.filter(|_| ran(r) && r.predicted_tokens_per_s.is_some())).collect();
    let predicted: Vec<Option<f64>> = rows.iter().map(|r| r.predicted_tokens_per_s).collect();
    let both: Vec<usize> = (0..rows.len()).filter(|i| measured[*i].is_some()).collect();
    if both.len() < 2 {
        return None;
    }
    let x: Vec<f64> = both.iter().filter_map(|i| predicted[*i]).collect();
    let y: Vec<f64> = both.iter().filter_map(|i| measured[*i]).collect();
    let tau = kendall_tau_b(&x, &y);
    let measured_ranks = ranks(&measured);
    let predicted_ranks = ranks(&predicted);
    let tied = |a: f64, b: f64| (a - b).abs() <= TIE * a.abs().max(b.abs());
    // fmperf's pick among the ranked runs: the fastest predicted that it does not call "no".
    let offered: Vec<usize> = both.iter().copied().filter(|i| verdict(rows[*i]) != Some(Fits::No)).collect();
    let pool = if offered.is_empty() { both.clone() } else { offered };
    let top = pool.iter().filter_map(|i| predicted[*i]).reduce(f64::max)?;
    let pick = pool
        .iter()
        .copied()
        .filter(|i| predicted[*i].is_some_and(|p| tied(p, top)))
        .min_by(|a, b| measured[*a].unwrap_or(0.0).total_cmp(&measured[*b].unwrap_or(0.0)))?;
    let best =
        both.iter().copied().max_by(|a, b| measured[*a].unwrap_or(0.0).total_cmp(&measured[*b].unwrap_or(0.0)))?;
    let regret = measured[best].zip(measured[pick]).map(|(b, p)| b / p - 1.0);
    // Runs fmperf cannot tell from its pick: throughput within the band's ratio of the pick's.
    let floor = predicted[pick].unwrap_or(top) / super::layout_band::band_ratio(super::layout_band::LAYOUT_BAND);
    let in_band = |i: usize| predicted[i].is_some_and(|p| p >= floor);
    // Among every run with a prediction that fmperf says fits: is its first one that failed?
    let first_overall = (0..rows.len())
        .filter(|i| verdict(rows[*i]) != Some(Fits::No))
        .filter_map(|i| predicted[i].map(|p| (i, p)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    Some(GroupRanking {
        group,
        source,
        ranked: both.len(),
        tau,
        regret,
        measured_best: Some(rows[best].id.clone()),
        predicted_best: Some(rows[pick].id.clone()),
        pick_measured_rank: measured_ranks[pick],
        ran_called_no: rows.iter().filter(|r| ran(r) && verdict(r) == Some(Fits::No)).map(|r| r.id.clone()).collect(),
        pick_ran_out_of_memory: first_overall.is_some_and(|i| !ran(rows[i])),
        within_band: both.iter().filter(|i| in_band(**i)).count(),
        best_within_band: in_band(best),
        runs: rows
            .iter()
            .enumerate()
            .map(|(i, r)| RankedRun {
                id: r.id.clone(),
                config: r.config.clone(),
                measured: measured[i],
                predicted: predicted[i],
                measured_rank: measured_ranks[i],
                predicted_rank: predicted_ranks[i],
                fits: verdict(r).map(Fits::as_str),
                oom: !ran(r),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_b_by_hand() {
        // Pairs (0,1) and (0,2) concordant, (1,2) discordant: (2 − 1) / 3.
        assert!((kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0]).unwrap() - 1.0 / 3.0).abs() < 1e-12);
        // Perfect and reversed orders.
        assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]), Some(1.0));
        assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]), Some(-1.0));
        // One tie in x: n0 = 3, n_x = 1, n_y = 0, C = 2, D = 0: 2 / √(2·3) = 0.8165.
        let t = kendall_tau_b(&[1.0, 1.0, 2.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!((t - 2.0 / 6f64.sqrt()).abs() < 1e-12);
        // Ties within 1e-9 relative count as ties; all tied: undefined.
        assert_eq!(kendall_tau_b(&[1.0, 1.0 + 1e-12], &[1.0, 2.0]), None);
        assert_eq!(kendall_tau_b(&[1.0], &[1.0]), None);
    }

    fn row(id: &str, measured: Option<f64>, predicted: f64, fits: Option<Fits>, oom: bool) -> RowResult {
        let mut r = super::super::prepared::Prepared::new(&MeasuredRun { id: id.into(), ..MeasuredRun::default() })
            .predict(crate::mode_kind::ModeKind::Extended, crate::extended::efficiency::Efficiency::FITTED);
        r.measured_tokens_per_s = measured;
        r.predicted_tokens_per_s = Some(predicted);
        r.memory = fits.map(|f| super::super::memory::MemoryResult {
            kind: "peak_allocated",
            predicted_gb: None,
            measured_gb: None,
            capacity_gb: None,
            fits: Some(f),
            device_gb: None,
            band_gb: None,
            error: None,
            error_loso: None,
            fragmentation_held_out: None,
            measured_kind: crate::vocab::MemoryKind::PeakAllocated,
            figures: None,
            oom: Some(oom),
            reason: None,
        });
        r
    }

    #[test]
    fn regret_and_verdicts_by_hand() {
        // Measured 100, 90, 80; fmperf predicts 70, 95, 60: it ranks b first (measured 90):
        // regret 100 / 90 − 1 = 0.1111; tau: pairs (a,b) D, (a,c) C, (b,c) C → 1/3.
        let rows = [
            row("a", Some(100.0), 70.0, None, false),
            row("b", Some(90.0), 95.0, None, false),
            row("c", Some(80.0), 60.0, None, false),
        ];
        let refs: Vec<&RowResult> = rows.iter().collect();
        let g = rank_group("g".into(), "S".into(), &refs).unwrap();
        assert!((g.regret.unwrap() - (100.0 / 90.0 - 1.0)).abs() < 1e-12);
        assert!((g.tau.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            (g.predicted_best.as_deref(), g.measured_best.as_deref(), g.pick_measured_rank),
            (Some("b"), Some("a"), Some(2))
        );
        // 70 and 60 are far below 95 / band ratio: only the pick is within the band.
        assert_eq!((g.within_band, g.best_within_band), (1, false));
        // fmperf calls b "does not fit" though it ran: its pick is a (regret 0), b is listed, and
        // an out-of-memory run d that fmperf ranks first overall and says fits is flagged.
        let rows = [
            row("a", Some(100.0), 70.0, Some(Fits::Yes), false),
            row("b", Some(90.0), 95.0, Some(Fits::No), false),
            row("c", Some(80.0), 60.0, Some(Fits::Tight), false),
            row("d", None, 120.0, Some(Fits::Yes), true),
        ];
        let refs: Vec<&RowResult> = rows.iter().collect();
        let g = rank_group("g".into(), "S".into(), &refs).unwrap();
        assert_eq!((g.regret, g.predicted_best.as_deref()), (Some(0.0), Some("a")));
        assert_eq!(g.ran_called_no, vec!["b".to_string()]);
        assert!(g.pick_ran_out_of_memory);
        assert_eq!(g.ranked, 3);
        // Tied predictions: the pick is the slower of the tied runs (80): regret 0.25.
        let rows = [row("a", Some(100.0), 50.0, None, false), row("c", Some(80.0), 50.0, None, false)];
        let refs: Vec<&RowResult> = rows.iter().collect();
        let g = rank_group("g".into(), "S".into(), &refs).unwrap();
        assert_eq!((g.regret, g.tau), (Some(0.25), None));
        // Both predicted alike: both within the band, and the measured best among them.
        assert_eq!((g.within_band, g.best_within_band), (2, true));
        // Fewer than two ranked runs: no group.
        assert!(rank_group("g".into(), "S".into(), &refs[..1]).is_none());
        let s = RankingStats::of(&[&g]);
        assert_eq!((s.groups, s.groups_with_tau, s.regret_median, s.top1_hits), (1, 0, Some(0.25), 0));
    }
}

//! **The result row**: one ranked configuration as every output writes it — `fmperf search`
//! (JSON, CSV, table), the explorer's exports and the sweeps' exports. The candidate → columns
//! mapping is written here once ([`Candidate::dims`], [`ResultRow`]).
//!
//! The contract (ARCHITECTURE.md) is the JSON object of [`ResultRow::to_json`], the shape of
//! `fmperf search --format json`'s `results[]`: `throughput_samples_per_s`,
//! `time_per_iteration_s`, `mem_gb`, `config` (`dp`, `tp`, `pp`, `mbs`, `microbatches`; `tp1`,
//! `tp2` unless 1d; `nb` in 2d; always `cp`, `ep`, `etp`), `placement` (`nv_tp`, `nv_dp`, `nv_pp`
//! in 1d; `nv_tp1`, `nv_tp2`, `nv_dp`, `nv_pp` otherwise), `time_s`, `memory_gb` (keys of
//! [`TimePart::key`] and [`MemoryPart::key`]), plus `strategy`, `code` and, when the search chose
//! it, `execution` (with `cp_comm` and `cp_ulysses` when the search chose the context-parallel
//! flavour, `cp_comm=search`); in extended mode with the capacity known, `memory_band_gb` (the half-width of
//! the held-out memory band [GB]) and `fits` (`yes`, `tight` = may not fit, `no`). New keys are
//! added, never renamed. Flat outputs (CSV, tables) use
//! [`ResultRow::COLUMNS`]: every dimension for every strategy.
//!
//! `ep` and `etp` (expert and expert-tensor parallel degrees) are 1 for dense models.

use serde_json::{Map, Value, json};

use super::code::format_candidate;
use super::execution::Execution;
use super::topk::Ranked;
use crate::Strategy;
use crate::vocab::Candidate;
use crate::vocab::{MemoryPart, TimePart};

/// The parallel dimensions of a configuration [devices, or samples for `mbs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Dims {
    /// Data-parallel degree.
    pub dp: u64,
    /// Devices of the tensor-parallel grid `tp1·tp2`, as the reference and `fmperf search` have
    /// always written `tp` (in 2d-seqp this includes the context split: the tensor-parallel
    /// degree proper is `tp1`, the context-parallel degree `cp`).
    pub tp: u64,
    /// First grid dimension (1d: the tensor-parallel degree).
    pub tp1: u64,
    /// Second grid dimension (2d: tokens; 2d-seqp: context parallel; 1d: 1).
    pub tp2: u64,
    /// Context-parallel degree (2d-seqp's `tp2`; else 1).
    pub cp: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Expert-parallel degree (1 for dense models).
    pub ep: u64,
    /// Expert tensor-parallel degree (1 for dense models).
    pub etp: u64,
    /// Expert data-parallel degree `tp·cp·dp/(ep·etp)` of an MoE model (`None` for dense models;
    /// written after `etp` in `config`, no flat column).
    pub edp: Option<u64>,
    /// Micro-batch size [samples].
    pub mbs: u64,
    /// Micro-batches per iteration.
    pub microbatches: u64,
    /// SUMMA panels (1 unless 2d).
    pub nb: u64,
}

impl Candidate {
    /// The parallel dimensions of this configuration with a global batch of `global_batch`.
    pub fn dims(&self, global_batch: u64) -> Dims {
        let c = self;
        Dims {
            dp: c.dp,
            tp: c.tp(),
            tp1: c.tp1,
            tp2: c.tp2,
            cp: if c.strategy == Strategy::ContextParallel2D { c.tp2 } else { 1 },
            pp: c.pp,
            ep: 1,
            etp: 1,
            edp: None,
            mbs: c.mbs,
            microbatches: c.microbatches(global_batch),
            nb: c.nb,
        }
    }
}

/// One ranked configuration in the shape every output writes.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    /// The configuration.
    pub candidate: Candidate,
    /// Its dimensions.
    pub dims: Dims,
    /// `G / t` [samples/s].
    pub throughput_samples_per_s: f64,
    /// Iteration time `t` [s].
    pub time_per_iteration_s: f64,
    /// Memory per device [GB].
    pub mem_gb: f64,
    /// What a device needs once the allocator has given its cache back [GB]
    /// ([`Ranked::need_gb`]): the side of the verdict a `no` is judged on. Not written.
    pub need_gb: f64,
    /// The time parts [s], in [`TimePart::ALL`] order.
    pub time_s: [(TimePart, f64); TimePart::COUNT],
    /// The four memory parts [GB].
    pub memory_gb: [(MemoryPart, f64); 4],
    /// The execution the search chose (extended mode).
    pub execution: Option<Execution>,
    /// Half-width of the memory band around `mem_gb` [GB]: the relative band the caller gives
    /// (validation's held-out error of the memory model on the shipped measured runs,
    /// `validate::memory::shipped_band`) times `mem_gb`; extended mode, once the capacity is known
    /// ([`Self::with_capacity`]), else `None`.
    pub memory_band_gb: Option<f64>,
    /// The verdict against the capacity with that band ([`crate::vocab::fits_between`]): `yes`
    /// (`mem_gb` fits at the top of the band), `no` (`need_gb`, without the allocator's cache,
    /// does not fit even at the bottom), else `tight` (may not fit).
    pub fits: Option<crate::vocab::Fits>,
}

/// How numbers are written in flat outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Digits {
    /// Shortest exact form of each `f64` (files: CSV, JSON).
    Exact,
    /// Rounded for reading (tables): 4 decimals for times and rates, 2 for memory.
    Rounded,
}

impl ResultRow {
    /// The flat columns before any caller's extra columns: rank, strategy, config code, rate, time.
    pub const LEAD: [&'static str; 5] = ["rank", "strategy", "config", "throughput [samples/s]", "iteration [s]"];
    /// The dimension and placement columns of flat outputs, in order.
    pub const DIMS: [&'static str; 15] = [
        "dp",
        "tp",
        "tp1",
        "tp2",
        "cp",
        "pp",
        "ep",
        "etp",
        "mbs",
        "microbatches",
        "nb",
        "nv_tp1",
        "nv_tp2",
        "nv_dp",
        "nv_pp",
    ];
    /// The execution columns (empty in reference mode).
    pub const EXECUTION: [&'static str; 4] = ["recompute", "sharding", "shard_group", "interleave"];

    /// The row of a ranked configuration searched with a global batch of `global_batch`.
    pub fn of(r: &Ranked, global_batch: u64) -> ResultRow {
        let mut dims = r.candidate.dims(global_batch);
        if let Some(x) = r.experts {
            (dims.ep, dims.etp, dims.edp) = (x.ep, x.etp, Some(x.edp));
        }
        ResultRow {
            candidate: r.candidate,
            dims,
            throughput_samples_per_s: r.throughput_samples_per_s,
            time_per_iteration_s: r.time_per_iteration_s,
            mem_gb: r.mem_gb,
            need_gb: r.need_gb,
            time_s: TimePart::ALL.map(|p| (p, p.of(&r.totals))),
            memory_gb: MemoryPart::ALL.map(|p| (p, p.of(&r.totals))),
            execution: r.execution,
            memory_band_gb: None,
            fits: None,
        }
    }

    /// This row with its memory verdict on a device of `capacity_gb` [GB] with the relative error
    /// bands of the memory model: `band` either way for the half-width and a `no`, `under` for a
    /// `yes` (the callers pass `validate::memory::shipped_band()` and `shipped_under_band()`; the
    /// search does not reach into validation; [`crate::vocab::fits_between`]). Extended mode only: a row with an execution; a
    /// reference-mode row is returned as it is — its memory is the published model's, which the
    /// band of extended mode's memory model does not describe.
    pub fn with_capacity(mut self, capacity_gb: f64, band: f64, under: f64) -> ResultRow {
        if self.execution.is_some() {
            self.memory_band_gb = Some(band * self.mem_gb);
            let need = crate::vocab::Need { with_cache_gb: self.mem_gb, without_cache_gb: self.need_gb };
            self.fits = Some(crate::vocab::fits_between(need, capacity_gb, under, band));
        }
        self
    }

    /// `config` of the JSON contract: strategy-dependent keys first (as `fmperf search` always
    /// wrote them), then `cp`, `ep`, `etp` (and `edp` for MoE models).
    pub fn config_pairs(&self) -> Vec<(&'static str, u64)> {
        let (d, s) = (&self.dims, self.candidate.strategy);
        let mut v = vec![("dp", d.dp), ("tp", d.tp)];
        if s != Strategy::OneD {
            v.extend([("tp1", d.tp1), ("tp2", d.tp2)]);
        }
        v.extend([("pp", d.pp), ("mbs", d.mbs), ("microbatches", d.microbatches)]);
        if s == Strategy::Summa2D {
            v.push(("nb", d.nb));
        }
        v.extend([("cp", d.cp), ("ep", d.ep), ("etp", d.etp)]);
        v.extend(d.edp.map(|e| ("edp", e)));
        v
    }

    /// `placement` of the JSON contract (fast-domain shares).
    pub fn placement_pairs(&self) -> Vec<(&'static str, u64)> {
        let c = &self.candidate;
        let mut v = if c.strategy == Strategy::OneD {
            vec![("nv_tp", c.nv_tp1)]
        } else {
            vec![("nv_tp1", c.nv_tp1), ("nv_tp2", c.nv_tp2)]
        };
        v.extend([("nv_dp", c.nv_dp), ("nv_pp", c.nv_pp)]);
        v
    }

    /// The JSON object of the contract (see the module documentation).
    pub fn to_json(&self) -> Value {
        let ints = |v: Vec<(&str, u64)>| {
            Value::Object(crate::sort::json_object(v.into_iter().map(|(k, x)| (k.to_string(), json!(x)))))
        };
        let mut m = Map::new();
        m.insert("throughput_samples_per_s".into(), json!(self.throughput_samples_per_s));
        m.insert("time_per_iteration_s".into(), json!(self.time_per_iteration_s));
        m.insert("mem_gb".into(), json!(self.mem_gb));
        m.insert("config".into(), ints(self.config_pairs()));
        m.insert("placement".into(), ints(self.placement_pairs()));
        m.insert(
            "time_s".into(),
            Value::Object(crate::sort::json_object(self.time_s.iter().map(|(p, v)| (p.key().into(), json!(v))))),
        );
        m.insert(
            "memory_gb".into(),
            Value::Object(crate::sort::json_object(self.memory_gb.iter().map(|(p, v)| (p.key().into(), json!(v))))),
        );
        m.insert("strategy".into(), json!(self.candidate.strategy.as_str()));
        m.insert("code".into(), json!(format_candidate(&self.candidate)));
        if let Some(e) = self.execution {
            m.insert("execution".into(), json!(e));
        }
        if let (Some(band), Some(fits)) = (self.memory_band_gb, self.fits) {
            m.insert("memory_band_gb".into(), json!(band));
            m.insert("fits".into(), json!(fits.as_str()));
        }
        Value::Object(m)
    }

    /// The memory verdict's columns of the flat outputs (`fmperf search` table and CSV), given as
    /// `extra` columns when the rows have a verdict (extended mode): `fits` (`yes`, `tight`, `no`)
    /// and the band's half-width [GB].
    pub const VERDICT: [&'static str; 2] = ["fits", "mem band [GB]"];

    /// The cells of [`Self::VERDICT`] (empty strings without a verdict).
    pub fn verdict_cells(&self, digits: Digits) -> Vec<String> {
        let band = self.memory_band_gb.map_or(String::new(), |b| match digits {
            Digits::Exact => b.to_string(),
            Digits::Rounded => format!("{b:.2}"),
        });
        vec![self.fits.map_or(String::new(), |f| f.as_str().to_string()), band]
    }

    /// The context-parallel flavour's columns of the flat outputs, given as `extra` columns when a
    /// row's search chose it (`cp_comm=search`): the flavour (`ring`, `ulysses`, `hybrid`) and
    /// its Ulysses degree (1 for the ring, `cp` for Ulysses; the ring degree is `cp / cp_ulysses`).
    pub const CP_FLAVOUR: [&'static str; 2] = ["cp_comm", "cp_ulysses"];

    /// The cells of [`Self::CP_FLAVOUR`] (empty strings where the flavour was not chosen: no
    /// context parallelism, or a fixed flavour).
    pub fn cp_flavour_cells(&self) -> Vec<String> {
        match self.execution.and_then(|e| e.cp) {
            Some(f) => vec![f.cp_comm.to_string(), f.cp_ulysses.to_string()],
            None => vec![String::new(), String::new()],
        }
    }

    /// Whether the search chose this row's context-parallel flavour.
    pub fn has_cp_flavour(&self) -> bool {
        self.execution.is_some_and(|e| e.cp.is_some())
    }

    /// The flat header: [`Self::LEAD`], the caller's `extra` columns, `mem [GB]`, [`Self::DIMS`],
    /// each time part (`label [s]`), each memory part (`label [GB]`), [`Self::EXECUTION`].
    pub fn header(extra: &[&str]) -> Vec<String> {
        let mut h: Vec<String> = Self::LEAD.iter().chain(extra).map(|s| s.to_string()).collect();
        h.push("mem [GB]".into());
        h.extend(Self::DIMS.iter().map(|s| s.to_string()));
        h.extend(TimePart::ALL.iter().map(|p| format!("{} [s]", p.label())));
        h.extend(MemoryPart::ALL.iter().map(|p| format!("{} [GB]", p.label())));
        h.extend(Self::EXECUTION.iter().map(|s| s.to_string()));
        h
    }

    /// The flat cells in [`Self::header`]'s order (`rank` from 1, `extra` as given).
    pub fn cells(&self, rank: usize, extra: Vec<String>, digits: Digits) -> Vec<String> {
        let num = |x: f64, places: usize| match digits {
            Digits::Exact => x.to_string(),
            Digits::Rounded => format!("{x:.places$}"),
        };
        let c = &self.candidate;
        let mut v = vec![
            rank.to_string(),
            c.strategy.to_string(),
            format_candidate(c),
            num(self.throughput_samples_per_s, 4),
            num(self.time_per_iteration_s, 4),
        ];
        v.extend(extra);
        v.push(num(self.mem_gb, 2));
        v.extend(self.dim_cells());
        v.extend(self.time_s.iter().map(|(_, x)| num(*x, 4)));
        v.extend(self.memory_gb.iter().map(|(_, x)| num(*x, 2)));
        match self.execution {
            Some(e) => v.extend([
                e.recompute.to_string(),
                e.sharding.to_string(),
                e.shard_group.map_or("all".to_string(), |g| g.to_string()),
                e.interleave.to_string(),
            ]),
            None => v.extend(Self::EXECUTION.iter().map(|_| String::new())),
        }
        v
    }

    /// The cells of [`Self::DIMS`].
    pub fn dim_cells(&self) -> Vec<String> {
        let (c, d) = (&self.candidate, &self.dims);
        [
            d.dp,
            d.tp,
            d.tp1,
            d.tp2,
            d.cp,
            d.pp,
            d.ep,
            d.etp,
            d.mbs,
            d.microbatches,
            d.nb,
            c.nv_tp1,
            c.nv_tp2,
            c.nv_dp,
            c.nv_pp,
        ]
        .iter()
        .map(u64::to_string)
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Totals;

    fn ranked(c: Candidate) -> Ranked {
        Ranked {
            candidate: c,
            throughput_samples_per_s: 2.0,
            time_per_iteration_s: 0.5,
            mem_gb: 10.0,
            need_gb: 10.0,
            totals: Totals::default(),
            execution: None,
            experts: None,
        }
    }

    fn row(c: Candidate) -> ResultRow {
        ResultRow::of(&ranked(c), 64)
    }

    #[test]
    fn the_verdict_judges_no_without_the_cache() {
        // USP's 64K SP-only layout on an 85.899 GB A800: 96.68 GB with the allocator's cache,
        // 78.81 without; bands 0.08 (no) and 0.302 (yes). 78.81 · 0.92 = 72.5 ≤ 85.899 → not no;
        // 96.68 · 1.302 = 125.9 > 85.899 → not yes: tight. Judged on 96.68 alone it was no
        // (96.68 · 0.92 = 88.9 > 85.899).
        let c = Candidate::one_d(16, 1, 1, 1, 1, 8, 1);
        let execution = Some(Execution::of(&crate::extended::ExtendedOptions::realistic()));
        let r = Ranked { mem_gb: 96.68, need_gb: 78.81, execution, ..ranked(c) };
        assert_eq!(ResultRow::of(&r, 16).with_capacity(85.899, 0.08, 0.302).fits, Some(crate::vocab::Fits::Tight));
        let one = Ranked { need_gb: 96.68, ..r };
        assert_eq!(ResultRow::of(&one, 16).with_capacity(85.899, 0.08, 0.302).fits, Some(crate::vocab::Fits::No));
        // The band's half-width stays on the figure with the cache: 0.08 · 96.68.
        assert!(
            (ResultRow::of(&r, 16).with_capacity(85.899, 0.08, 0.302).memory_band_gb.unwrap() - 7.7344).abs() < 1e-9
        );
    }

    #[test]
    fn an_moe_row_carries_its_expert_degrees() {
        let x = crate::extended::moe::ExpertLayout { ep: 8, etp: 1, edp: 2, ..Default::default() };
        let c = Candidate::one_d(16, 1, 1, 1, 1, 8, 1);
        let r = Ranked { experts: Some(x), ..ranked(c) };
        let row = ResultRow::of(&r, 64);
        assert_eq!((row.dims.ep, row.dims.etp, row.dims.edp), (8, 1, Some(2)));
        let pairs = row.config_pairs();
        assert_eq!(&pairs[pairs.len() - 3..], [("ep", 8), ("etp", 1), ("edp", 2)]);
        // Dense rows: 1 and 1, no expert data parallelism.
        let dense = ResultRow::of(&ranked(c), 64);
        assert_eq!((dense.dims.ep, dense.dims.etp, dense.dims.edp), (1, 1, None));
    }

    #[test]
    fn dims_of_each_strategy() {
        let one = Candidate::one_d(4, 8, 2, 1, 8, 1, 1);
        assert_eq!((one.dims(64).tp, one.dims(64).cp, one.dims(64).microbatches), (8, 1, 16));
        let seqp = Candidate { strategy: Strategy::ContextParallel2D, tp2: 2, ..one };
        assert_eq!((seqp.dims(64).tp, seqp.dims(64).tp1, seqp.dims(64).cp), (16, 8, 2));
        let summa = Candidate { strategy: Strategy::Summa2D, tp2: 2, nb: 4, ..one };
        assert_eq!((summa.dims(64).tp, summa.dims(64).cp), (16, 1));
    }

    #[test]
    fn json_keeps_the_search_keys_and_flat_rows_match_the_header() {
        let r = row(Candidate::one_d(4, 8, 2, 1, 8, 1, 1));
        let j = r.to_json();
        let keys: Vec<&str> = j["config"].as_object().unwrap().keys().map(String::as_str).collect();
        for k in ["dp", "tp", "pp", "mbs", "microbatches", "cp", "ep", "etp"] {
            assert!(keys.contains(&k), "{k}");
        }
        assert!(j["config"].get("tp1").is_none());
        assert_eq!(j["placement"], json!({"nv_tp": 8, "nv_dp": 1, "nv_pp": 1}));
        assert_eq!(j["code"], "1d.dp4.tp8.pp2.mbs1.nv8x1x1");
        let header = ResultRow::header(&["extra"]);
        assert_eq!(r.cells(1, vec!["x".into()], Digits::Exact).len(), header.len());
        assert_eq!(r.cells(1, vec!["x".into()], Digits::Rounded)[3], "2.0000");
    }
}

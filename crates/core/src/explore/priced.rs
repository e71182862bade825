//! The explorer in either mode: a validated scenario priced by reference mode or by extended mode
//! with its switches (as the resolver set it up: [`ExploreSpec::with_mode`]), its searches in
//! that mode, and the full evaluation of one configuration in that mode ([`Detail`]) for the
//! selected configuration, the comparison and "try your own".
//!
//! Extended mode reads the catalog entries themselves (grouped-query attention, SwiGLU, the
//! vocabulary; the part at the switch's precision with its measured ceiling), leaves 2D SUMMA out
//! (a note says so; a scenario of only `2d` is an error at the strategies) and counts model FLOPs
//! for MFU with the standard per-token formula (GQA, gated MLP, attention, output head) instead of
//! the reference's layer counts.

use crate::cost::Pricer;
use crate::extended::Workload;
use crate::resolve::explorer::ExploreSpec;
use crate::search::{Engine, Execution, ExecutionChoices, Ranked, Search};
use crate::validate::convention::{ConventionShape, FlopConvention, iteration_flops};
use crate::validate::moe_flops::{FlopRules, model_flops_per_token};
use crate::vocab::Candidate;
use crate::{Error, Strategy};

use crate::cost::Detail;

/// Model FLOPs of one sample (forward and backward, no recomputation) as extended mode counts a
/// model [TFLOP]: the standard per-token count with the model's own attention width, K/V heads,
/// MLP matrices and output head (`validate::convention`'s model-FLOPs convention).
///
/// A Mixture-of-Experts model is counted by the same convention (`3 ×` forward, attention over
/// every key, no router, no multi-token-prediction blocks) block by block
/// ([`crate::validate::moe_flops::model_flops_per_token`]): dense blocks with their MLP, MoE blocks
/// with the routed experts `top_k` times and the shared experts (`2·m·h·(k·f_e + E_s·f_s)`), and
/// latent attention (MLA) with its own projections. Counting its `ffn_hidden` in every block (as
/// a dense model) would leave out all but one of the experts a token visits.
pub fn model_flops_per_sample_tflop(w: &Workload, gqa: bool, gated: bool) -> f64 {
    if w.moe.is_some() {
        let rules = FlopRules { causal: false, router: false, mtp: false, gated };
        return model_flops_per_token(w, &rules) * w.seq_len as f64 * 1e-12;
    }
    let shape = ConventionShape {
        layers: w.layers as f64,
        hidden: w.hidden as f64,
        q_width: w.q_width() as f64,
        kv_width: w.kv_width(gqa) as f64,
        ffn: w.ffn_hidden as f64,
        mlp_matrices: w.mlp_in_matrices(gated) as f64 + 1.0,
        seq: w.seq_len as f64,
        vocab: w.vocab.unwrap_or(0) as f64,
        params: None,
    };
    iteration_flops(FlopConvention::ModelFlops, &shape, 1.0).unwrap_or(f64::NAN) * 1e-12
}

impl ExploreSpec {
    /// The scenario with these execution choices for extended mode's searches (by default every
    /// choice is searched except the switches changed from their defaults).
    pub fn with_execution(mut self, choices: ExecutionChoices) -> Result<ExploreSpec, Error> {
        choices.validate()?;
        self.execution = choices;
        Ok(self)
    }

    /// The search of one strategy in the scenario's mode.
    pub fn search(&self, strategy: Strategy) -> Result<Search, Error> {
        Search::in_mode(self.search_spec(strategy), self.extended.clone(), self.execution)
    }

    /// The execution extended mode's search chooses for `c`: the fastest that fits among the
    /// scenario's choices (ties: the least memory, then the first in
    /// [`ExecutionChoices::combinations`]' order), as the search ranks it; else the leanest; `None` in reference mode.
    pub fn best_execution(&self, c: &Candidate) -> Option<Execution> {
        let e = self.extended.as_ref()?;
        let ch = self.execution;
        let fixed = ch.fixed_execution(&e.options);
        if !ch.searches_with(&e.options) {
            return Some(fixed);
        }
        let (cp, nv_cp) = if c.strategy == Strategy::ContextParallel2D { (c.tp2, c.nv_tp2) } else { (1, 1) };
        let combos = ch.combinations(e.options.stack, c.pp, e.workload.layers, c.dp * cp, c.nv_dp * nv_cp);
        // Under `cp_comm=search`, each flavour of the layout in turn (else the switches' one).
        let flavours = crate::search::execution::cp_flavours(&e.workload, &e.options, c.tp1, cp, nv_cp);
        let mut best: Option<(f64, f64, Execution)> = None;
        let mut leanest: Option<(f64, Execution)> = None;
        for x in flavours.iter().flat_map(|f| combos.iter().map(|x| x.with_cp(*f))) {
            let Ok(mut ev) = e.evaluator(&x.apply(&e.options), c.strategy, self.global_batch) else {
                continue;
            };
            let Ok(o) = ev.evaluate(c) else { continue };
            let better = best.is_none_or(|(t, m, _)| {
                o.throughput_samples_per_s > t || (o.throughput_samples_per_s == t && o.mem_gb < m)
            });
            // As the search decides: the need without the allocator's cache fits.
            if o.need_gb <= e.hardware.hbm_capacity_gb && better {
                best = Some((o.throughput_samples_per_s, o.mem_gb, x));
            }
            if leanest.is_none_or(|(m, _)| o.need_gb < m) {
                leanest = Some((o.need_gb, x));
            }
        }
        best.map(|(_, _, x)| x).or(leanest.map(|(_, x)| x)).or(Some(fixed))
    }

    /// What the scenario is priced with, in its mode ([`Pricer`]).
    pub fn pricer(&self) -> Pricer<'_> {
        Pricer { shape: &self.model, system: &self.system, extended: self.extended.as_ref() }
    }

    /// The evaluator of one strategy in the scenario's mode.
    pub(crate) fn engine(&self, strategy: Strategy) -> Result<Engine, Error> {
        self.pricer().model(strategy, self.global_batch)
    }

    /// The full evaluation of `c` in the scenario's mode; in extended mode with the execution the
    /// search chooses for it ([`ExploreSpec::best_execution`]).
    pub fn evaluate(&self, c: &Candidate) -> Result<Detail, Error> {
        self.evaluate_with(c, self.best_execution(c))
    }

    /// The full evaluation of a ranked configuration, with the execution it was ranked with.
    pub fn evaluate_ranked(&self, r: &Ranked) -> Result<Detail, Error> {
        self.evaluate_with(&r.candidate, r.execution.or_else(|| self.best_execution(&r.candidate)))
    }

    /// The full evaluation of `c` with an execution (extended mode; `None`: the switches').
    pub fn evaluate_with(&self, c: &Candidate, execution: Option<Execution>) -> Result<Detail, Error> {
        // Extended mode's own rules (uneven stages, partial domains) are checked by its layout;
        // the reference's check would reject what extended mode allows.
        let options = self.extended.as_ref().zip(execution).map(|(e, x)| x.apply(&e.options));
        self.pricer().model_with(c.strategy, self.global_batch, options.as_ref())?.detail(c)
    }

    /// Peak matrix rate of one device at the mode's precision [TFLOP/s].
    pub fn peak_matrix_tflops(&self) -> f64 {
        self.pricer().peak_matrix_tflops()
    }

    /// Memory of one device [GB] (the feasibility limit).
    pub fn capacity_gb(&self) -> f64 {
        self.pricer().capacity_gb()
    }
}

//! One measured row read once and priced in either mode: its setup ([`super::row`]), the model
//! that prices it in each mode and what that model gives (an iteration's time in seconds, the
//! memory predicted per device in GB, the capacity it is compared with), the row's result in one
//! mode ([`Prepared::predict`]), the key that tells which rows extended mode prices alike
//! ([`PricingKey`]), and the conversion of an iteration time into the row's own time figure
//! ([`Conversion`]: tokens/s, TFLOP/s, MFU, …), which the fits reuse.

use super::convention::flops_of;
use super::memory::{self, MemoryResult, measured_gb, read_memory_kind};
use super::metric::read_metric;
use super::reason::RowReason;
use super::row::{RunSetup, interpret};
use super::schema::MeasuredRun;
use crate::SystemParams;
use crate::cost::{CostModel, ExtendedSetup, GivenConfiguration, Pricer};
use crate::extended::efficiency::Efficiency;
use crate::extended::{self, ExtendedOptions, Hardware, Layout, Recompute, Workload};
use crate::vocab::{Fits, MetricKind, Need, Note, PredictedMemory, predicted_memory_gb, utilisation_of_step};

use super::compare::RowResult;
use crate::mode_kind::ModeKind;

/// What extended mode's time of a row depends on besides `η` ([`Prepared::pricing_key`]): keys
/// are equal when every field is (`==`, floats as values); the hash reads the workload and the
/// layout (integers), so equal keys hash alike and rows on one layout with other parts or
/// switches only share a bucket.
#[derive(Clone, Copy)]
pub struct PricingKey<'a> {
    /// The model as extended mode reads it.
    pub workload: &'a Workload,
    /// The parallel layout.
    pub layout: &'a Layout,
    /// The part.
    pub hardware: &'a Hardware,
    /// The switches.
    pub options: &'a ExtendedOptions,
}

impl PartialEq for PricingKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.workload == other.workload
            && self.layout == other.layout
            && self.hardware == other.hardware
            && self.options == other.options
    }
}

/// A key with a NaN field equals no key (not even itself), so such rows are priced apart: the
/// same prices, computed again.
impl Eq for PricingKey<'_> {}

impl std::hash::Hash for PricingKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.workload, self.layout).hash(state);
    }
}

/// A row read and priced once, ready to be predicted at any `η`.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The run.
    pub run: MeasuredRun,
    /// The setup, or why there is none.
    pub setup: Result<RunSetup, RowReason>,
    /// Extended mode's hardware for it.
    pub hardware: Result<Hardware, RowReason>,
    /// Whether the row states a time figure.
    pub has_time_figure: bool,
    /// The kind of its memory figure and how it was read.
    pub memory_kind: (crate::vocab::MemoryKind, Option<Note>),
}

impl Prepared {
    /// Reads a run.
    pub fn new(run: &MeasuredRun) -> Prepared {
        let setup = interpret(run);
        let hardware = match &setup {
            Ok(s) => s.hardware(),
            Err(e) => Err(e.clone()),
        };
        Prepared {
            run: run.clone(),
            setup,
            hardware,
            has_time_figure: read_metric(run, None).is_ok(),
            memory_kind: read_memory_kind(&run.measured.memory),
        }
    }

    /// Extended mode's model of the row at `eta`, on the row's part; where the catalog lacks a
    /// rate the time needs, on a part with stand-in rates ([`memory_stand_in`]: memory does not
    /// read rates), the time then void for that reason. Extended mode compares its need with
    /// what the driver offers (GB).
    fn extended_model(&self, eta: Efficiency) -> Result<RowModel, RowReason> {
        let setup = self.setup.as_ref().map_err(Clone::clone)?;
        self.extended_model_with(options_at(setup, eta))
    }

    /// [`Prepared::extended_model`] with the row's switches replaced by `options`.
    fn extended_model_with(&self, options: ExtendedOptions) -> Result<RowModel, RowReason> {
        let setup = self.setup.as_ref().map_err(Clone::clone)?;
        let (hardware, time_void) = match &self.hardware {
            Ok(hw) => (hw.clone(), None),
            Err(reason) => (memory_stand_in(setup), Some(reason.clone())),
        };
        let pricer = ExtendedSetup { workload: setup.workload, hardware, options };
        let strategy = crate::cost::candidate_of_layout(&setup.layout).strategy;
        Ok(RowModel {
            model: pricer
                .evaluator(&options, strategy, setup.layout.global_batch)
                .map(|e| Box::new(e) as Box<dyn CostModel>)
                .map_err(RowReason::ExtendedCannotEvaluate),
            cannot_evaluate: RowReason::ExtendedCannotEvaluate,
            time_void,
            capacity_gb: extended_capacity_gb(setup),
        })
    }

    /// The reference model of the row (its shape, the part mapped at 16 bits: [`RunSetup::reference`]),
    /// comparing its one memory figure with the part's label, as it always has.
    fn reference_model(&self) -> Result<RowModel, RowReason> {
        let setup = self.setup.as_ref().map_err(Clone::clone)?;
        let capacity_gb = setup.system.memory_gb;
        let strategy = crate::cost::candidate_of_layout(&setup.layout).strategy;
        let model = setup.reference().and_then(|(shape, params)| {
            let pricer = Pricer { shape: &shape, system: &params, extended: None };
            pricer.model(strategy, setup.layout.global_batch).map_err(RowReason::ReferenceCannotEvaluate)
        });
        Ok(RowModel { model, cannot_evaluate: RowReason::ReferenceCannotEvaluate, time_void: None, capacity_gb })
    }

    /// The row priced by extended mode at `eta` (through [`CostModel::price_layout`]).
    fn extended_pricing(&self, eta: Efficiency) -> RowPricing {
        self.pricing(self.extended_model(eta))
    }

    /// The row's layout priced by `model` ([`CostModel::price_layout`]): its totals and memory, or
    /// why there are none.
    fn pricing(&self, model: Result<RowModel, RowReason>) -> RowPricing {
        let m = match model {
            Ok(m) => m,
            Err(e) => return RowPricing::unreadable(&e),
        };
        let layout = match &self.setup {
            Ok(s) => &s.layout,
            Err(e) => return RowPricing::unreadable(e),
        };
        let detail = m.model.and_then(|mut model| model.price_layout(layout).map_err(m.cannot_evaluate));
        let memory_by_kind = detail.as_ref().is_ok_and(|d| d.tells_memory_kinds_apart());
        let memory = detail.as_ref().map_err(Clone::clone).map(|d| {
            let (allocated_gb, reserved_gb, device_gb) = d.memory_by_kind_gb();
            PredictedMemory { allocated_gb, reserved_gb, device_gb }
        });
        let totals = match (m.time_void, detail) {
            (Some(reason), _) => Err(reason),
            (None, d) => d.map(|d| *d.totals()),
        };
        RowPricing { totals, memory, capacity_gb: m.capacity_gb, memory_by_kind }
    }

    /// The row as the verdict band sees an out-of-memory run: its source, extended mode's
    /// prediction and the capacity it ran out of (`None` for a run that ran, or without a
    /// prediction or a capacity).
    pub fn out_of_memory(&self) -> Option<memory::OutOfMemory> {
        if self.run.measured.memory.oom != Some(true) {
            return None;
        }
        let capacity_gb = extended_capacity_gb(self.setup.as_ref().ok()?)?;
        let predicted = self.extended_pricing(Efficiency::FITTED).memory.ok()?;
        Some(memory::OutOfMemory { source: self.run.source.clone(), predicted, capacity_gb })
    }

    /// The memory error `predicted / measured − 1` of a row that ran, in extended mode (`None`
    /// without a figure or a prediction).
    pub fn memory_error(&self) -> Option<f64> {
        let s = self.scored_memory()?;
        Some(predicted_memory_gb(&s.predicted, s.kind) / s.measured_gb - 1.0)
    }

    /// The row as the fragmentation fit sees it: a run that ran, its measured figure and extended
    /// mode's prediction (`None` without either).
    pub fn scored_memory(&self) -> Option<memory::ScoredMemory> {
        let mem = &self.run.measured.memory;
        if mem.oom == Some(true) {
            return None;
        }
        let measured = measured_gb(mem)?;
        let predicted = self.extended_pricing(Efficiency::FITTED).memory.ok()?;
        Some(memory::ScoredMemory {
            source: self.run.source.clone(),
            kind: self.memory_kind.0,
            predicted,
            measured_gb: measured,
        })
    }

    /// The row's time error `predicted / measured − 1` in extended mode at `eta`: what the fits
    /// minimise, equal to `predict(ModeKind::Extended, eta).error` without building the row's texts
    /// (`None` where that is `None`).
    pub fn time_error(&self, eta: Efficiency) -> Option<f64> {
        let setup = self.setup.as_ref().ok()?;
        let metric = setup.metric.as_ref()?;
        let (conversion, _) = Conversion::of(setup).ok()?;
        Some(conversion.at(self.extended_time_s(eta)?) / metric.value - 1.0)
    }

    /// Extended mode's iteration time of the row at `eta` [s] (`None` without a setup, a part
    /// extended mode can price, or an evaluation).
    pub fn extended_time_s(&self, eta: Efficiency) -> Option<f64> {
        self.hardware.as_ref().ok()?;
        Some(self.extended_pricing(eta).totals.ok()?.t)
    }

    /// The row's configuration laid out for the fits' many constants
    /// ([`extended::timing::TimePlan`]): `None` without a setup or a part, where extended mode
    /// cannot evaluate it, or where its operations are not all described (then
    /// [`Prepared::extended_time_s`] prices it in full).
    pub fn time_plan(&self) -> Option<extended::timing::TimePlan> {
        let (setup, hw) = (self.setup.as_ref().ok()?, self.hardware.as_ref().ok()?);
        let opts = options_at(setup, Efficiency::FITTED);
        extended::timing::TimePlan::new(&setup.workload, hw, &setup.layout, &opts).ok()?
    }

    /// [`Prepared::extended_time_s`] through the row's `plan` where it has one (the same bits).
    pub fn planned_time_s(&self, plan: Option<&mut extended::timing::TimePlan>, eta: Efficiency) -> Option<f64> {
        match (plan, self.setup.as_ref()) {
            (Some(plan), Ok(_)) => plan.time_s(eta).ok(),
            _ => self.extended_time_s(eta),
        }
    }

    /// Extended mode's iteration time of the row on `hw` (the row's part with other stack
    /// constants, [`super::one_shot`]) at `eta` [s]; `Err`: why it cannot be evaluated (the
    /// reason [`Prepared::predict`] gives).
    pub fn extended_time_on(&self, hw: &Hardware, eta: Efficiency) -> Result<f64, RowReason> {
        let setup = self.setup.as_ref().map_err(Clone::clone)?;
        let options = options_at(setup, eta);
        let pricer = ExtendedSetup { workload: setup.workload, hardware: hw.clone(), options };
        let strategy = crate::cost::candidate_of_layout(&setup.layout).strategy;
        pricer
            .evaluator(&options, strategy, setup.layout.global_batch)
            .and_then(|mut model| model.price_layout(&setup.layout))
            .map(|d| d.totals().t)
            .map_err(RowReason::ExtendedCannotEvaluate)
    }

    /// The row's time error on `hw` at `eta` ([`Prepared::time_error`] with another part).
    pub fn time_error_on(&self, hw: &Hardware, eta: Efficiency) -> Option<f64> {
        let setup = self.setup.as_ref().ok()?;
        let metric = setup.metric.as_ref()?;
        let (conversion, _) = Conversion::of(setup).ok()?;
        Some(conversion.at(self.extended_time_on(hw, eta).ok()?) / metric.value - 1.0)
    }

    /// What extended mode's time of the row depends on besides `η`: its workload, part, layout
    /// and switches ([`PricingKey`]). Two rows with the same key are priced alike at every `η`,
    /// so the fits price one of them ([`super::fit_cache`]). `None` without a setup or a part.
    pub fn pricing_key(&self) -> Option<PricingKey<'_>> {
        let setup = self.setup.as_ref().ok()?;
        let hardware = self.hardware.as_ref().ok()?;
        Some(PricingKey { workload: &setup.workload, layout: &setup.layout, hardware, options: &setup.options })
    }

    /// Predicts the row in `mode` (extended mode with efficiencies `eta`).
    pub fn predict(&self, mode: ModeKind, eta: Efficiency) -> RowResult {
        let run = &self.run;
        let has_time_figure = self.has_time_figure;
        let mem = &run.measured.memory;
        let has_memory = mem.is_stated();
        let (kind, kind_note) = self.memory_kind.clone();
        let mut r = RowResult {
            id: run.id.clone(),
            source: run.source.clone(),
            hardware: run.hardware_id.clone().or_else(|| run.hardware.clone()),
            config: None,
            metric: None,
            metric_structured: None,
            predicted: None,
            measured: None,
            error: None,
            error_loso: None,
            error_one_shot: None,
            skipped: has_time_figure || !has_memory,
            reason: None,
            has_time_figure,
            predicted_step_s: None,
            measured_step_s: None,
            predicted_tokens_per_s: None,
            measured_tokens_per_s: None,
            assumptions: Vec::new(),
            totals: None,
            memory: has_memory.then(|| MemoryResult {
                kind: kind.as_str(),
                predicted_gb: None,
                measured_gb: measured_gb(mem),
                capacity_gb: None,
                fits: None,
                device_gb: None,
                band_gb: None,
                error: None,
                error_loso: None,
                fragmentation_held_out: None,
                measured_kind: kind,
                figures: None,
                oom: mem.oom,
                reason: None,
            }),
        };
        let setup = match &self.setup {
            Ok(s) => s,
            Err(reason) => {
                r.reason = Some(reason.to_string());
                if let Some(m) = r.memory.as_mut() {
                    m.reason = Some(reason.to_string());
                }
                return r;
            }
        };
        r.hardware = Some(setup.system.id.clone());
        r.config = Some(setup.describe());
        r.assumptions = setup.assumptions.clone();
        if has_memory {
            r.assumptions.extend(kind_note);
        }
        if let Some(m) = &setup.metric {
            r.metric = Some(m.name());
            r.metric_structured = Some(m.structured());
            r.measured = Some(m.value);
        }
        let RowPricing { totals, memory: predicted_memory, capacity_gb: capacity, memory_by_kind } =
            self.pricing(mode.price_given(&AtEfficiency { row: self, eta }));
        if let Some(m) = r.memory.as_mut() {
            match &predicted_memory {
                Ok(p) => {
                    let band = memory::shipped_band();
                    m.capacity_gb = capacity;
                    m.predicted_gb = Some(predicted_memory_gb(p, kind));
                    m.device_gb = Some(p.device_gb);
                    m.figures = memory_by_kind.then_some(*p);
                    m.band_gb = Some(band * p.device_gb);
                    m.fits = capacity.map(|c| {
                        let (fits, note) = self.verdict(mode, eta, p.need(), c);
                        r.assumptions.extend(note);
                        fits
                    });
                    if capacity.is_none() {
                        m.reason = Some(format!("{} lists no memory capacity (memory_gb is null)", setup.system.id));
                    }
                    if mem.oom != Some(true) {
                        m.error = m.predicted_gb.zip(m.measured_gb).map(|(p, x)| p / x - 1.0);
                    }
                }
                Err(e) => m.reason = Some(e.to_string()),
            }
        }
        let totals = match totals {
            Ok(t) => t,
            Err(reason) => {
                r.reason = Some(reason.to_string());
                return r;
            }
        };
        let Some(metric) = &setup.metric else {
            r.totals = Some(totals);
            r.predicted_step_s = Some(totals.t);
            return r;
        };
        match predicted_metric(setup, totals.t) {
            Ok((pred, note)) => {
                r.assumptions.extend(note);
                let err = pred / metric.value - 1.0;
                r.predicted = Some(pred);
                r.error = Some(err);
                r.skipped = false;
                r.predicted_step_s = Some(totals.t);
                r.measured_step_s =
                    Some(if metric.kind.higher_is_faster() { totals.t * pred / metric.value } else { metric.value });
                let l = &setup.layout;
                let tokens = l.global_batch as f64 * setup.workload.seq_len as f64 / l.devices() as f64;
                r.predicted_tokens_per_s = Some(tokens / totals.t);
                r.measured_tokens_per_s = r.measured_step_s.map(|t| tokens / t);
                r.totals = Some(totals);
            }
            Err(reason) => r.reason = Some(reason.to_string()),
        }
        r
    }
}

impl Prepared {
    /// The verdict on the row's predicted `need` on `capacity_gb` in `mode` ([`memory::verdict`]),
    /// with a note where a policy the source leaves unstated decides it. A `no` says the run cannot
    /// fit even at the least it can need; a row that does not state its recomputation is priced
    /// with none (the default of Megatron-LM, PyTorch, DeepSpeed and Hugging Face's Trainer:
    /// `--recompute-granularity` and `gradient_checkpointing` are off unless set), but it may have
    /// checkpointed every block, so its `no` is judged on the need without the allocator's cache at
    /// full recomputation ([`AtFullRecompute`]): `tight` (may not fit) where that fits.
    fn verdict(&self, mode: ModeKind, eta: Efficiency, need: Need, capacity_gb: f64) -> (Fits, Option<Note>) {
        let fits = memory::verdict(need, capacity_gb);
        if fits != Fits::No {
            return (fits, None);
        }
        let Some(least_gb) = mode.price_given(&AtFullRecompute { row: self, eta }) else {
            return (fits, None);
        };
        let widened =
            memory::verdict(Need { without_cache_gb: least_gb.min(need.without_cache_gb), ..need }, capacity_gb);
        let note = (widened != fits).then(|| {
            Note::reading(format!(
                "recomputation not stated: `{}` judged at full recomputation too, the least the run can need \
                 ({least_gb:.1} GB without the allocator's cache, of {capacity_gb:.1} GB): {}",
                fits.words(),
                widened.words()
            ))
            .about("parallel.recompute")
        });
        (widened, note)
    }
}

/// A row whose source does not state its recomputation, priced at full recomputation in extended
/// mode: its need without the allocator's cache [GB] ([`Need::without_cache_gb`]), the least the
/// run can need. `None` where the row states its policy, where it cannot be priced, or in reference
/// mode (whose published model has no recomputation switch).
struct AtFullRecompute<'a> {
    row: &'a Prepared,
    eta: Efficiency,
}

impl GivenConfiguration for AtFullRecompute<'_> {
    type Priced = Option<f64>;

    fn by_reference(&self) -> Option<f64> {
        None
    }

    fn by_extended(&self) -> Option<f64> {
        let setup = self.row.setup.as_ref().ok().filter(|s| !s.recompute.stated)?;
        let options = ExtendedOptions { recompute: Recompute::Full, ..options_at(setup, self.eta) };
        let memory = self.row.pricing(self.row.extended_model_with(options)).memory.ok()?;
        Some(memory.need().without_cache_gb)
    }
}

/// The row's switches with extended mode's efficiencies `eta`.
/// The memory extended mode compares a row's need with [GB]: the device total its driver reports,
/// per device when a chip holds several (`None` when the catalog lists none).
/// A row priced by one model.
struct RowPricing {
    /// The iteration's totals, or why there are none.
    totals: Result<crate::vocab::Totals, RowReason>,
    /// The memory predicted, or why there is none.
    memory: Result<PredictedMemory, RowReason>,
    /// The capacity the model compares the need with [GB] (`None`: the catalog lists none).
    capacity_gb: Option<f64>,
    /// Whether the model predicts each kind of memory figure (allocated, reserved, device) apart,
    /// so the row shows them; else one figure stands for all three.
    memory_by_kind: bool,
}

/// The model a row is priced with in one mode, from the row's inputs, and how that mode reports
/// the row.
struct RowModel {
    /// The model (or why it could not be built on the row's inputs).
    model: Result<Box<dyn CostModel>, RowReason>,
    /// The reason a rejection by the model gives.
    cannot_evaluate: fn(crate::Error) -> RowReason,
    /// Why the model's time is not the row's prediction although it prices the layout (a part
    /// whose rates stand in for memory alone).
    time_void: Option<RowReason>,
    /// The capacity the mode compares the need with [GB] (`None`: the catalog lists none).
    capacity_gb: Option<f64>,
}

impl RowPricing {
    /// A row that could not be read (`reason`): neither time nor memory.
    fn unreadable(reason: &RowReason) -> RowPricing {
        RowPricing {
            totals: Err(reason.clone()),
            memory: Err(reason.clone()),
            capacity_gb: None,
            memory_by_kind: false,
        }
    }
}

/// A row with extended mode's efficiencies `eta`: what either model is built from
/// ([`ModeKind::price_given`]).
struct AtEfficiency<'a> {
    row: &'a Prepared,
    eta: Efficiency,
}

impl GivenConfiguration for AtEfficiency<'_> {
    type Priced = Result<RowModel, RowReason>;

    fn by_reference(&self) -> Result<RowModel, RowReason> {
        self.row.reference_model()
    }

    fn by_extended(&self) -> Result<RowModel, RowReason> {
        self.row.extended_model(self.eta)
    }
}

fn extended_capacity_gb(setup: &RunSetup) -> Option<f64> {
    setup.system.device_memory_gb().map(|c| c / setup.devices_per_chip as f64)
}

fn options_at(setup: &RunSetup, eta: Efficiency) -> ExtendedOptions {
    ExtendedOptions { hardware: extended::timing::with_constants(setup.options.hardware, eta), ..setup.options }
}

/// The part of a row for memory alone, when the catalog lacks a rate the time needs: the row's
/// precision and the part's capacity and domain, with the reference H200 file's rates standing in
/// (memory does not read rates).
fn memory_stand_in(setup: &RunSetup) -> Hardware {
    let mut params = SystemParams::reference("H200").unwrap_or_else(|_| SystemParams::a100());
    params.hbm_capacity = setup.system.device_memory_gb().unwrap_or(params.hbm_capacity);
    params.domain_size = setup.system.scale_up.domain_size.max(1);
    params.element_size = setup.options.hardware.precision.element_size_gb();
    Hardware::from_params(&params, false)
}

/// How a row's time figure follows from an iteration time: the numbers of the row's convention
/// that do not depend on the time (tokens, devices, FLOPs of an iteration, the peak), worked out
/// once so that the fits ([`super::fit_cache`]) convert a priced time with a few divisions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conversion {
    kind: MetricKind,
    /// Tokens of an iteration (global batch × sequence) [tokens].
    tokens: f64,
    /// Devices of the layout.
    devices: f64,
    /// Global batch [sequences].
    batch: f64,
    /// FLOPs of an iteration in the row's count (TFLOP/s, MFU, HFU rows; else 0) [FLOP].
    flops: f64,
    /// The dense peak the row's MFU/HFU is a fraction of [TFLOP/s] (else 0).
    peak: f64,
}

impl Conversion {
    /// The conversion of the row's time figure, with a note on what was assumed (`Err`: the row
    /// has no time figure, or its figure needs a number that is not there).
    pub fn of(setup: &RunSetup) -> Result<(Conversion, Option<Note>), RowReason> {
        let metric = setup.metric.as_ref().ok_or(RowReason::NoTimeFigure)?;
        let l = &setup.layout;
        let batch = l.global_batch as f64;
        let mut c = Conversion {
            kind: metric.kind,
            tokens: batch * setup.workload.seq_len as f64,
            devices: l.devices() as f64,
            batch,
            flops: 0.0,
            peak: 0.0,
        };
        let flops = || {
            let count = metric.flops.unwrap_or(super::metric::FlopCount::Model);
            flops_of(count, &setup.convention_shape, batch, setup.options.recompute).map_err(RowReason::from)
        };
        let mut note = None;
        match metric.kind {
            MetricKind::StepTimeS
            | MetricKind::TokensPerSPerDevice
            | MetricKind::TokensPerSTotal
            | MetricKind::SamplesPerS => {}
            MetricKind::TflopsPerDevice => (c.flops, note) = flops()?,
            MetricKind::Mfu | MetricKind::Hfu => {
                c.peak = metric.peak_tflops.unwrap_or(setup.mfu_peak_tflops);
                if c.peak <= 0.0 {
                    return Err(RowReason::NoPeak {
                        kind: metric.kind,
                        precision: setup.options.hardware.precision,
                        system: setup.system.id.clone(),
                    });
                }
                (c.flops, note) = flops()?;
            }
        }
        Ok((c, note))
    }

    /// The row's time figure for an iteration of `t` seconds, in the figure's unit.
    pub fn at(&self, t: f64) -> f64 {
        let Conversion { tokens, devices, batch, flops, peak, .. } = *self;
        match self.kind {
            MetricKind::StepTimeS => t,
            MetricKind::TokensPerSPerDevice => tokens / (t * devices),
            MetricKind::TokensPerSTotal => tokens / t,
            MetricKind::SamplesPerS => batch / t,
            MetricKind::TflopsPerDevice => flops / (t * devices) * 1e-12,
            MetricKind::Mfu | MetricKind::Hfu => utilisation_of_step(flops, t, devices, peak),
        }
    }
}

/// The row's time figure for an iteration of `t` seconds, with a note on what was assumed.
pub fn predicted_metric(setup: &RunSetup, t: f64) -> Result<(f64, Option<Note>), RowReason> {
    let (c, note) = Conversion::of(setup)?;
    Ok((c.at(t), note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_share_a_pricing_key_only_when_priced_alike() {
        use std::hash::{BuildHasher, RandomState};
        let file = super::super::parse_measured_runs(super::super::MEASURED_RUNS_JSON).unwrap();
        let a = file.rows.iter().map(Prepared::new).find(|p| p.pricing_key().is_some()).unwrap();
        let b = Prepared::new(&a.run);
        let hasher = RandomState::new();
        let (ka, kb) = (a.pricing_key().unwrap(), b.pricing_key().unwrap());
        assert!(ka == kb && hasher.hash_one(ka) == hasher.hash_one(kb), "the same row twice: one key");
        // Another part (HBM bandwidth +1 GB/s): another key, though the hash (workload and
        // layout) is the same bucket.
        let mut c = Prepared::new(&a.run);
        if let Ok(hw) = c.hardware.as_mut() {
            hw.hbm_bandwidth_gbps += 1.0;
        }
        let kc = c.pricing_key().unwrap();
        assert!(ka != kc && hasher.hash_one(ka) == hasher.hash_one(kc));
    }
}

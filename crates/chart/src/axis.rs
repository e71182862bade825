//! An axis ready to draw: a scale fitted to the data with a "nice" domain, and its ticks placed
//! on screen and labelled. This is what the chart components use; it joins [`crate::scale`],
//! [`crate::ticks`] and [`crate::format`].

use crate::format::{ValueFormat, format_count, format_linear_tick, format_log_tick};
use crate::scale::{Scale, ScaleKind, pad};
use crate::ticks::{
    Tick, linear_ticks, linear_ticks_at_most, log_ticks, nice_linear_domain, nice_log_domain, nice_pow2_domain,
    pow2_ticks,
};

/// What kind of axis to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AxisKind {
    /// Linear scale, 1-2-5 ticks.
    #[default]
    Linear,
    /// Log10 scale, decade ticks (with 2 and 5 when the span is small).
    Log10,
    /// Log scale with ticks at powers of two (device counts, batch sizes).
    Pow2,
}

impl AxisKind {
    /// The scale behind the axis.
    pub fn scale_kind(self) -> ScaleKind {
        match self {
            AxisKind::Linear => ScaleKind::Linear,
            AxisKind::Log10 | AxisKind::Pow2 => ScaleKind::Log10,
        }
    }
}

/// A tick placed on screen.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisTick {
    /// Data value.
    pub value: f64,
    /// Screen position along the axis (SVG user units).
    pub pos: f64,
    /// Label text, `None` for a minor tick.
    pub label: Option<String>,
}

/// How to fit an axis to data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisOptions {
    /// Linear, log10 or power-of-two.
    pub kind: AxisKind,
    /// How tick labels are written.
    pub format: ValueFormat,
    /// Most labels wanted (derive it from the axis length: about 70 px per x label, 35 px per y
    /// label).
    pub max_labels: usize,
    /// Make a linear domain include 0 (bars, memory, shares). Ignored for log axes.
    pub include_zero: bool,
    /// Widen the domain to nice tick values (else: the data extent padded by 4 %).
    pub nice: bool,
}

impl Default for AxisOptions {
    fn default() -> Self {
        AxisOptions {
            kind: AxisKind::Linear,
            format: ValueFormat::Auto,
            max_labels: 6,
            include_zero: false,
            nice: true,
        }
    }
}

/// A fitted axis: the scale and the placed ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct FittedAxis {
    /// Options it was fitted with.
    pub options: AxisOptions,
    /// Data → screen mapping.
    pub scale: Scale,
    /// Ticks in ascending value order.
    pub ticks: Vec<AxisTick>,
}

impl FittedAxis {
    /// Fits an axis to the data extent `data` (`None` if there is no drawable value: a default
    /// domain [0, 1], or [1, 10] for log axes, is used) over the screen range `range`.
    /// Degenerate extents are padded (see [`crate::scale::pad`]). For log axes the extent must be
    /// positive (compute it with [`crate::scale::extent`], which skips values ≤ 0).
    pub fn fit(data: Option<(f64, f64)>, range: (f64, f64), options: AxisOptions) -> FittedAxis {
        let scale_kind = options.kind.scale_kind();
        let valid = data.filter(|&(lo, hi)| scale_kind.accepts(lo) && scale_kind.accepts(hi));
        let default = match scale_kind {
            ScaleKind::Linear => (0.0, 1.0),
            ScaleKind::Log10 => (1.0, 10.0),
        };
        let (mut lo, mut hi) = valid.map(|(a, b)| (a.min(b), a.max(b))).unwrap_or(default);
        if options.include_zero && scale_kind == ScaleKind::Linear {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if lo == hi {
            (lo, hi) = pad((lo, hi), scale_kind, 0.05);
        }
        let max_labels = options.max_labels.max(2);
        let domain = match (options.nice, options.kind) {
            (true, AxisKind::Linear) => nice_linear_domain(lo, hi, max_labels.min(6)),
            (true, AxisKind::Log10) => nice_log_domain(lo, hi),
            (true, AxisKind::Pow2) => nice_pow2_domain(lo, hi),
            (false, _) => {
                let (a, b) = pad((lo, hi), scale_kind, 0.04);
                // keep a zero baseline at zero
                if options.include_zero && scale_kind == ScaleKind::Linear {
                    (if lo == 0.0 { 0.0 } else { a }, if hi == 0.0 { 0.0 } else { b })
                } else {
                    (a, b)
                }
            }
        };
        let scale = Scale::new(scale_kind, domain, range).unwrap_or_else(|_| Scale::linear((0.0, 1.0), range));
        let ticks = place_ticks(&scale, options, max_labels);
        FittedAxis { options, scale, ticks }
    }

    /// Screen position of `v`, `None` if it has none (see [`Scale::map`]).
    pub fn pos(&self, v: f64) -> Option<f64> {
        self.scale.map(v)
    }

    /// The labelled ticks only.
    pub fn labeled(&self) -> impl Iterator<Item = &AxisTick> {
        self.ticks.iter().filter(|t| t.label.is_some())
    }
}

/// Computes, places and labels the ticks of `scale`'s domain.
fn place_ticks(scale: &Scale, options: AxisOptions, max_labels: usize) -> Vec<AxisTick> {
    let (lo, hi) = scale.domain();
    let ticks: Vec<Tick> = match options.kind {
        AxisKind::Linear => {
            // The ticks of the step the nice domain was made with, so both ends carry a tick,
            // unless that gives clearly too many.
            let ticks = linear_ticks(lo, hi, max_labels.min(6));
            let ticks = if ticks.len() <= max_labels + 1 { ticks } else { linear_ticks_at_most(lo, hi, max_labels) };
            ticks.into_iter().map(|value| Tick { value, labeled: true }).collect()
        }
        AxisKind::Log10 => log_ticks(lo, hi, max_labels),
        AxisKind::Pow2 => pow2_ticks(lo, hi, max_labels),
    };
    let step = linear_step(&ticks);
    ticks
        .into_iter()
        .filter_map(|t| {
            let pos = scale.map(t.value)?;
            let label = t.labeled.then(|| label(t.value, options, step));
            Some(AxisTick { value: t.value, pos, label })
        })
        .collect()
}

/// The spacing of evenly spaced ticks (0 if fewer than two).
fn linear_step(ticks: &[Tick]) -> f64 {
    match ticks {
        [a, b, ..] => (b.value - a.value).abs(),
        _ => 0.0,
    }
}

/// The label of one tick.
fn label(v: f64, options: AxisOptions, step: f64) -> String {
    match (options.kind, options.format) {
        (AxisKind::Pow2, _) | (_, ValueFormat::Count) if v.abs() >= 1.0 || v == 0.0 => format_count(v),
        (AxisKind::Linear, ValueFormat::Percent) => format!("{} %", format_linear_tick(v * 100.0, step * 100.0)),
        (AxisKind::Linear, _) => format_linear_tick(v, step),
        (_, ValueFormat::Percent) => format!("{} %", format_log_tick(v * 100.0)),
        _ => format_log_tick(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(axis: &FittedAxis) -> Vec<String> {
        axis.labeled().filter_map(|t| t.label.clone()).collect()
    }

    #[test]
    fn linear_axis_fits_nice_domain_and_places_ticks() {
        let axis = FittedAxis::fit(Some((0.3, 9.6)), (50.0, 550.0), AxisOptions::default());
        assert_eq!(axis.scale.domain(), (0.0, 10.0));
        assert_eq!(labels(&axis), ["0", "2", "4", "6", "8", "10"]);
        let pos: Vec<f64> = axis.ticks.iter().map(|t| t.pos).collect();
        assert_eq!(pos, [50.0, 150.0, 250.0, 350.0, 450.0, 550.0]);
    }

    #[test]
    fn short_linear_axis_still_ends_on_labelled_ticks() {
        let options = AxisOptions { include_zero: true, max_labels: 3, ..AxisOptions::default() };
        let axis = FittedAxis::fit(Some((0.0, 24.5)), (0.0, 210.0), options);
        assert_eq!(axis.scale.domain(), (0.0, 30.0));
        assert_eq!(labels(&axis), ["0", "10", "20", "30"], "one over the budget beats an unlabelled end");
    }

    #[test]
    fn y_axis_includes_zero_and_is_reversed() {
        let options = AxisOptions { include_zero: true, max_labels: 5, ..AxisOptions::default() };
        let axis = FittedAxis::fit(Some((35.0, 78.0)), (300.0, 20.0), options);
        assert_eq!(axis.scale.domain().0, 0.0);
        assert!(axis.scale.domain().1 >= 78.0);
        assert_eq!(axis.ticks.first().unwrap().pos, 300.0);
        assert!(axis.ticks.windows(2).all(|w| w[1].pos < w[0].pos), "larger values higher up");
        assert!(labels(&axis).len() <= 5);
    }

    #[test]
    fn log_axis_over_decades() {
        let options = AxisOptions { kind: AxisKind::Log10, max_labels: 7, ..AxisOptions::default() };
        let axis = FittedAxis::fit(Some((3.0, 45000.0)), (0.0, 500.0), options);
        assert_eq!(axis.scale.domain(), (2.0, 5e4));
        assert_eq!(labels(&axis), ["10", "100", "1k", "10k"]);
        assert!(axis.ticks[0].label.is_none() && axis.ticks[0].value == 2.0, "the ends are minor 2/5 ticks");
        assert_eq!(axis.ticks[0].pos, 0.0);
        assert!((axis.ticks.last().unwrap().pos - 500.0).abs() < 1e-9);
        // A log axis given a non-positive extent falls back to its default domain.
        let axis = FittedAxis::fit(Some((0.0, 10.0)), (0.0, 100.0), options);
        assert_eq!(axis.scale.domain(), (1.0, 10.0));
    }

    #[test]
    fn pow2_axis_for_device_counts() {
        let options = AxisOptions { kind: AxisKind::Pow2, max_labels: 8, ..AxisOptions::default() };
        let axis = FittedAxis::fit(Some((8.0, 12000.0)), (0.0, 600.0), options);
        assert_eq!(axis.scale.domain(), (8.0, 16384.0));
        assert_eq!(labels(&axis), ["16", "64", "256", "1024", "4096", "16384"]);
        assert_eq!(axis.ticks.len(), 12, "unlabelled powers stay as minor ticks");
    }

    #[test]
    fn empty_and_degenerate_data() {
        let axis = FittedAxis::fit(None, (0.0, 100.0), AxisOptions::default());
        assert_eq!(axis.scale.domain(), (0.0, 1.0));
        let axis = FittedAxis::fit(Some((5.0, 5.0)), (0.0, 100.0), AxisOptions::default());
        let (lo, hi) = axis.scale.domain();
        assert!(lo < 5.0 && hi > 5.0, "{lo} {hi}");
        assert!(axis.ticks.len() >= 2);
    }

    #[test]
    fn percent_and_unpadded_axes() {
        let options = AxisOptions { format: ValueFormat::Percent, include_zero: true, ..AxisOptions::default() };
        let axis = FittedAxis::fit(Some((0.0, 0.93)), (0.0, 100.0), options);
        assert_eq!(labels(&axis), ["0 %", "20 %", "40 %", "60 %", "80 %", "100 %"]);
        let options = AxisOptions { nice: false, include_zero: true, ..AxisOptions::default() };
        let axis = FittedAxis::fit(Some((0.0, 50.0)), (0.0, 100.0), options);
        assert_eq!(axis.scale.domain(), (0.0, 52.0), "padded at the top only: zero baseline kept");
    }
}

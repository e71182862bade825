//! SVG chart components. Geometry, ticks, formatting and colours come from `fmperf-chart`
//! (tested on the host); these components only turn them into SVG and handle hover, keyboard and
//! export.
//!
//! Every chart:
//! - is responsive: it measures its container (ResizeObserver) and lays itself out at that width
//!   (fonts keep their size), with a fixed height;
//! - has a title, axis labels (the caller puts the units in the label text, `time [s]`), a legend,
//!   tooltips on hover or touch, and keyboard navigation (focus the chart, then arrows, Home,
//!   End, Escape);
//! - is a standalone SVG document: `xmlns`, `role="img"`, `<title>`, `<desc>` (a text summary),
//!   and an embedded stylesheet whose colours follow the page's light/dark scheme (or the
//!   `--fc-*` custom properties, see `fmperf_chart::style`);
//! - can be exported as SVG or PNG (see [`export`]), through buttons under it or by the caller
//!   with the `svg_ref` it passes in.
//!
//! Components: [`line::LineChart`], [`bars::StackedBarChart`], [`heatmap::Heatmap`],
//! [`scatter::ScatterChart`].

#![allow(dead_code, unused_imports)]

pub mod bars;
pub mod export;
mod frame;
pub mod heatmap;
pub mod line;
pub mod scatter;

pub use bars::{Bar, Limit, Orientation, StackedBarChart, Standing};
pub use export::{ExportButtons, export_png, export_svg, svg_markup};
pub use fmperf_chart::{AxisKind, ValueFormat, heatmap::HeatCell};
pub use heatmap::{Heatmap, HeatmapData};
pub use line::{LineChart, Series};
pub use scatter::{ScatterChart, ScatterGroup, ScatterPoint};

//! # fmperf-chart
//!
//! The pure geometry behind fmperf's SVG charts: linear and logarithmic scales, "nice" ticks, SVG
//! path building, stacked-bar layout, colour maps and number formatting. No DOM, no I/O: the web
//! app's chart components (`src/chart/` in the root package) turn these values into SVG
//! elements, and the host tests check them.
//!
//! Coordinates are SVG user units (CSS px when a chart is drawn at its natural size), with y
//! growing downwards. Modules, one concept each:
//! - [`scale`]: data → screen mappings (linear, log10), domain extent and padding;
//! - [`ticks`]: tick values (1-2-5 linear, decades, powers of two) and nice domains;
//! - [`format`]: tick and tooltip number formatting, durations, percentages;
//! - [`axis`]: a fitted axis (scale + placed, labelled ticks);
//! - [`path`]: SVG path data for lines with gaps, areas, bands, polygons;
//! - [`marker`]: per-series marker shapes;
//! - [`layout`]: chart frame, text measurement, legend and tooltip placement;
//! - [`cartesian`]: the whole layout of a two-axis chart (title, legend, frame, fitted axes);
//! - [`bars`]: stacked and grouped bar geometry;
//! - [`limit`]: a limit line on a bar chart (a capacity), each bar's band, outline and end label;
//! - [`heatmap`]: cell grid and the sequential colour map;
//! - [`scatter`]: y = x reference, ±N % bands, agreement statistics;
//! - [`nearest`]: hover hit-testing;
//! - [`color`], [`palette`], [`style`]: colours, light/dark themes, the embedded stylesheet.

pub mod axis;
pub mod bars;
pub mod cartesian;
pub mod color;
pub mod format;
pub mod heatmap;
pub mod layout;
pub mod limit;
pub mod marker;
pub mod nearest;
pub mod palette;
pub mod path;
pub mod scale;
pub mod scatter;
pub mod style;
pub mod ticks;

pub use axis::{AxisKind, AxisOptions, AxisTick, FittedAxis};
pub use color::Rgb;
pub use format::ValueFormat;
pub use layout::Rect;
pub use palette::Theme;
pub use scale::{Scale, ScaleError, ScaleKind};

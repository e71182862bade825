//! # fmperf-chart
//!
//! The pure geometry behind fmperf's SVG charts: linear and logarithmic scales, "nice" ticks, SVG
//! path building, stacked-bar layout, colour maps and number formatting. No DOM, no I/O: the web
//! app's chart components turn these values into SVG elements, and the host tests check them.

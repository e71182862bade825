//! fmperf-app: the web app's logic that needs no browser, tested on the host. The page
//! (`src/`, wasm32 only) keeps the DOM, the signals and the drawing; everything it decides from
//! text — the URL state, the explorer's and the studies' keys, the mode a URL is read in, the
//! system spec's options, numbers as people type them, the arrangement of sweep results into
//! charts, and the comparison of configurations — lives here.
//!
//! * [`query`]: a query string as ordered pairs, parsed and written;
//! * [`results`]: result rows: named parallel dimensions, placements collapsed, and the texts of
//!   the results card (summary, headers, cells);
//! * [`mode`]: the `mode`/`ext` keys, the default mode and how old permalinks are read;
//! * [`explorer`]: the explorer's keys, defaults, scenario fields and compared configurations;
//! * [`studies`]: the studies' keys: the sweep, its axes and the chart settings;
//! * [`arrange`]: sweep results arranged as lines, heat map cells and breakdowns;
//! * [`system_spec`]: the options of a system spec (`ID,nics=2,scale_out=50`);
//! * [`number`]: `4k`, `16M`, `15T`, `1e12` as typed;
//! * [`pickers`]: the model and system pickers, the user's entries first;
//! * [`compare`]: ratios of compared configurations;
//! * [`batch`]: the global batch each model was trained with;
//! * [`words`]: input problems in the user's words;
//! * [`fmt`]: numbers as the explorer writes them (fixed decimals per quantity);
//! * [`error_bands`]: the error bar next to each predicted time; [`band_runs`]: the runs each
//!   bar cites, per part family, for the validation view;
//! * [`sensitivity`]: "what would help most", the strip of six system features at ×0.5 and ×2,
//!   and the Studies link of each;
//! * [`style`]: the stylesheets the modules carry (the explorer's, the sensitivity strip's), minified;
//! * [`views`]: the page's views, the `view` and `embed` keys, the shell's words;
//! * [`calibration`]: "your measured run": the typed figure, the fit on a configuration, the
//!   calibrated and uncalibrated numbers side by side, the saved entries; [`run_cost`]: the whole
//!   run's device-hours, energy and money at the user's price or the part's example price;
//! * [`jobs`]: searches and sweeps split into jobs for the page's Web Workers, merged back with
//!   the core's merges.

pub mod arrange;
pub mod band_runs;
pub mod batch;
pub mod calibration;
pub mod compare;
pub mod error_bands;
pub mod explorer;
pub mod fmt;
pub mod jobs;
pub mod mode;
pub mod number;
pub mod pickers;
pub mod query;
pub mod results;
pub mod run_cost;
pub mod sensitivity;
pub mod studies;
pub mod style;
pub mod system_spec;
pub mod views;
pub mod words;

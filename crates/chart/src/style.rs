//! The stylesheet embedded in every chart's `<svg>` (so an exported file looks the same
//! standalone), in two forms:
//! - live ([`live_stylesheet`]): colours come from CSS custom properties with concrete fallbacks,
//!   light by default and dark under `prefers-color-scheme: dark`. A page with its own theme
//!   switch overrides them by setting `--fc-text`, `--fc-bg`, … (see [`VARS`] and
//!   [`page_declarations`]) on the chart or any ancestor;
//! - resolved ([`resolved_stylesheet`]): the same rules with concrete colours only, for export
//!   (no custom properties, no media query: renders identically in any SVG viewer).
//!
//! Class names all start with `fc-`; the rules are identical in every chart, so repeated
//! `<style>` elements in one page do not conflict.

use crate::color::Rgb;
use crate::layout::Typography;
use crate::palette::{DARK, LIGHT, SERIES_COLORS, Theme};
use std::fmt::Write;

/// Names of the themable colours, as used in the custom properties `--fc-<name>` (set by the
/// page) and `--fc-i-<name>` (internal, resolved on the chart's root).
pub const VARS: [&str; 10 + SERIES_COLORS] = [
    "text",
    "muted",
    "axis",
    "grid",
    "bg",
    "panel",
    "infeasible",
    "reference",
    "warn",
    "alert",
    "s0",
    "s1",
    "s2",
    "s3",
    "s4",
    "s5",
    "s6",
    "s7",
];

/// The colour of `name` (one of [`VARS`]) in `theme`.
pub fn theme_color(theme: &Theme, name: &str) -> Option<Rgb> {
    Some(match name {
        "text" => theme.text,
        "muted" => theme.muted,
        "axis" => theme.axis,
        "grid" => theme.grid,
        "bg" => theme.background,
        "panel" => theme.panel,
        "infeasible" => theme.infeasible,
        "reference" => theme.reference,
        "warn" => theme.warn,
        "alert" => theme.alert,
        _ => {
            let i: usize = name.strip_prefix('s')?.parse().ok()?;
            *theme.series.get(i)?
        }
    })
}

/// `theme` with colour `name` replaced (unknown names are ignored).
pub fn with_color(mut theme: Theme, name: &str, color: Rgb) -> Theme {
    match name {
        "text" => theme.text = color,
        "muted" => theme.muted = color,
        "axis" => theme.axis = color,
        "grid" => theme.grid = color,
        "bg" => theme.background = color,
        "panel" => theme.panel = color,
        "infeasible" => theme.infeasible = color,
        "reference" => theme.reference = color,
        "warn" => theme.warn = color,
        "alert" => theme.alert = color,
        _ => {
            if let Some(slot) =
                name.strip_prefix('s').and_then(|i| i.parse::<usize>().ok()).and_then(|i| theme.series.get_mut(i))
            {
                *slot = color;
            }
        }
    }
    theme
}

/// A theme read back from CSS: `lookup(name)` returns the computed value of `--fc-i-<name>`;
/// values that are not `#rgb`/`#rrggbb` keep `fallback`'s colour.
pub fn theme_from_css(lookup: impl Fn(&str) -> Option<String>, fallback: Theme) -> Theme {
    VARS.iter().fold(fallback, |theme, name| match lookup(name).and_then(|v| Rgb::parse_hex(&v)) {
        Some(color) => with_color(theme, name, color),
        None => theme,
    })
}

/// `--fc-<name>:#rrggbb;` declarations for all colours of `theme`, for a page stylesheet that
/// switches chart themes itself (e.g. under `[data-theme=dark]`).
pub fn page_declarations(theme: &Theme) -> String {
    VARS.iter().filter_map(|n| Some(format!("--fc-{n}:{};", theme_color(theme, n)?))).collect()
}

const FONT: &str = "system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif";

/// The rules, with `color(name)` giving the CSS colour value of each themable colour.
fn rules(color: impl Fn(&str) -> String) -> String {
    let t = Typography::default();
    let mut css = String::new();
    let mut rule = |selector: &str, body: String| {
        let _ = write!(css, "{selector}{{{body}}}");
    };
    rule(".fc", format!("font-family:{FONT};-webkit-user-select:none;user-select:none"));
    rule(".fc text", "font-family:inherit".into());
    rule(".fc-bg", format!("fill:{}", color("bg")));
    rule(".fc-title", format!("fill:{};font-size:{}px;font-weight:600", color("text"), t.title_px));
    rule(".fc-label,.fc-legend", format!("fill:{};font-size:{}px", color("text"), t.label_px));
    rule(".fc-tick", format!("fill:{};font-size:{}px;font-variant-numeric:tabular-nums", color("muted"), t.tick_px));
    rule(".fc-axis", format!("stroke:{};stroke-width:1;fill:none;shape-rendering:crispEdges", color("axis")));
    rule(".fc-grid", format!("stroke:{};stroke-width:1;fill:none;shape-rendering:crispEdges", color("grid")));
    rule(".fc-grid-minor", format!("stroke:{};stroke-width:1;stroke-dasharray:2 3;fill:none", color("grid")));
    rule(".fc-line", "fill:none;stroke:currentColor;stroke-width:2;stroke-linejoin:round;stroke-linecap:round".into());
    rule(".fc-mark", format!("fill:currentColor;stroke:{};stroke-width:1", color("bg")));
    rule(".fc-bar", format!("fill:currentColor;stroke:{};stroke-width:0.75", color("bg")));
    rule(".fc-swatch", "fill:currentColor".into());
    rule(".fc-ref", format!("stroke:{};stroke-width:1.25;stroke-dasharray:6 4;fill:none", color("reference")));
    // A limit on a bar chart (a device's capacity), the band of each bar's figure, and the marks of
    // bars that may not fit under it (dashed amber outline, `!`) or do not (solid red outline, `×`).
    rule(".fc-limit", format!("stroke:{};stroke-width:1.5;fill:none", color("text")));
    rule(".fc-limit-label", format!("fill:{};font-size:{}px;font-weight:600", color("text"), t.tick_px));
    rule(".fc-range", format!("stroke:{};stroke-width:1.25;fill:none", color("text")));
    rule(".fc-flag", "fill:none;stroke-width:2".into());
    rule(".fc-flag-near", format!("stroke:{};stroke-dasharray:5 3", color("warn")));
    rule(".fc-flag-over", format!("stroke:{}", color("alert")));
    rule(".fc-glyph-near", format!("fill:{};font-weight:700", color("warn")));
    rule(".fc-glyph-over", format!("fill:{};font-weight:700", color("alert")));
    rule(".fc-band", format!("fill:{};fill-opacity:0.13;stroke:none", color("reference")));
    rule(".fc-hatch", format!("stroke:{};stroke-width:1.5", color("infeasible")));
    rule(".fc-infeasible", format!("stroke:{};stroke-width:0.75", color("infeasible")));
    rule(".fc-missing", format!("fill:none;stroke:{};stroke-dasharray:3 3", color("grid")));
    rule(".fc-colorbar", format!("stroke:{};stroke-width:1", color("axis")));
    rule(".fc-hl", format!("fill:none;stroke:{};stroke-width:2", color("text")));
    rule(".fc-cursor", format!("stroke:{};stroke-width:1;stroke-dasharray:3 3", color("axis")));
    rule(".fc-tip rect", format!("fill:{};fill-opacity:0.96;stroke:{};stroke-width:1", color("panel"), color("axis")));
    rule(".fc-tip text", format!("fill:{};font-size:{}px", color("text"), t.label_px));
    rule(".fc-tip .fc-tip-head", "font-weight:600".into());
    // A chart reached by keyboard shows the page's focus ring (amber, the page's `--focus`; a
    // plain colour, so the resolved sheet of an exported chart stays free of custom properties)
    // around it and a frame inside; a click gives it neither.
    rule(".fc:focus:not(:focus-visible)", "outline:none".into());
    rule(".fc:focus-visible", "outline:3px solid #f0a202;outline-offset:2px".into());
    rule(".fc:focus-visible .fc-frame", format!("stroke:{};stroke-width:2", color("text")));
    rule(".fc-frame", "fill:none;stroke:none".into());
    rule(".fc-empty", format!("fill:{};font-size:{}px", color("muted"), t.label_px));
    for i in 0..SERIES_COLORS {
        rule(&format!(".fc-s{i}"), format!("color:{}", color(&format!("s{i}"))));
    }
    css
}

/// `--fc-i-<name>:var(--fc-<name>,<fallback>);` for every colour of `theme`.
fn internal_vars(theme: &Theme) -> String {
    VARS.iter().filter_map(|n| Some(format!("--fc-i-{n}:var(--fc-{n},{});", theme_color(theme, n)?))).collect()
}

/// The stylesheet for charts on a page (see the module documentation).
pub fn live_stylesheet() -> String {
    format!(
        ".fc{{{}}}@media (prefers-color-scheme:dark){{.fc{{{}}}}}{}",
        internal_vars(&LIGHT),
        internal_vars(&DARK),
        rules(|n| format!("var(--fc-i-{n})"))
    )
}

/// The stylesheet with concrete colours from `theme`, for exported files.
pub fn resolved_stylesheet(theme: &Theme) -> String {
    rules(|n| theme_color(theme, n).map(|c| c.to_hex()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_var_names_a_theme_colour() {
        for name in VARS {
            assert!(theme_color(&LIGHT, name).is_some(), "{name}");
            let changed = with_color(LIGHT, name, Rgb::new(1, 2, 3));
            assert_eq!(theme_color(&changed, name), Some(Rgb::new(1, 2, 3)), "{name}");
        }
        assert_eq!(theme_color(&LIGHT, "s8"), None);
        assert_eq!(theme_color(&LIGHT, "nope"), None);
        assert_eq!(with_color(LIGHT, "nope", Rgb::new(0, 0, 0)), LIGHT);
    }

    #[test]
    fn live_sheet_has_fallbacks_for_both_themes() {
        let css = live_stylesheet();
        assert!(css.contains("--fc-i-text:var(--fc-text,#1f2328);"));
        assert!(css.contains("@media (prefers-color-scheme:dark){.fc{--fc-i-text:var(--fc-text,#e6edf3);"));
        assert!(css.contains(".fc-s0{color:var(--fc-i-s0)}"));
        // Every var() used by a rule is defined on the root.
        for name in VARS {
            assert!(css.contains(&format!("--fc-i-{name}:var(--fc-{name},")), "{name}");
        }
        assert_eq!(css.matches('{').count(), css.matches('}').count());
        assert!(!css.contains('<') && !css.contains('&'), "safe as raw <style> text in HTML and XML");
    }

    #[test]
    fn resolved_sheet_has_no_custom_properties() {
        let css = resolved_stylesheet(&DARK);
        assert!(!css.contains("var("), "{css}");
        assert!(!css.contains("@media"));
        assert!(css.contains(".fc-bg{fill:#0d1117}"));
        assert!(css.contains(".fc-s7{color:#f0e442}"));
        assert_eq!(resolved_stylesheet(&LIGHT).len(), css.len(), "same rules, same length colours");
    }

    #[test]
    fn theme_round_trips_through_css_values() {
        let lookup = |name: &str| theme_color(&DARK, name).map(|c| format!(" {} ", c.to_hex().to_uppercase()));
        assert_eq!(Theme { name: "dark", ..theme_from_css(lookup, LIGHT) }, DARK);
        // Unparseable values keep the fallback.
        let partial = |name: &str| if name == "bg" { Some("#000".to_string()) } else { Some("rgb(1 2 3)".to_string()) };
        let theme = theme_from_css(partial, LIGHT);
        assert_eq!(theme.background, Rgb::new(0, 0, 0));
        assert_eq!(theme.text, LIGHT.text);
        let decl = page_declarations(&LIGHT);
        assert!(decl.starts_with("--fc-text:#1f2328;") && decl.matches(';').count() == VARS.len());
    }
}

//! Chart themes: the neutral colours (text, axes, grid, backgrounds) and the categorical series
//! colours, each in a light and a dark variant.
//!
//! The series colours are chosen so that (checked by the tests below):
//! - every series colour has a WCAG contrast of at least 3:1 (the minimum for graphical objects)
//!   against its theme's background;
//! - any two series colours stay at least ΔE*ab = 12 apart in CIELAB for normal vision and under a
//!   simulated protanopia, deuteranopia and tritanopia (Machado, Oliveira & Fernandes 2009,
//!   "A physiologically-based model for simulation of color vision deficiency", IEEE TVCG 15(6),
//!   severity 1.0 matrices).
//!
//! The dark variant starts from the Okabe–Ito palette (Okabe & Ito 2008, "Color Universal
//! Design"), whose light colours read well on a dark background. On white, several Okabe–Ito
//! colours (orange, sky blue, yellow) fall below 3:1, so the light variant keeps the four darker
//! Okabe–Ito colours (blue, vermillion, bluish green, reddish purple) and adds four darker hues
//! picked for distance under the three simulations. Index i has a similar hue in both variants
//! where possible, so a series keeps its identity when the page switches theme.

use crate::color::{Rgb, delta_e};

/// Number of distinct series colours; series `i` uses colour `i % SERIES_COLORS`. Charts also vary
/// the marker shape per series, so more series than colours stay distinguishable.
pub const SERIES_COLORS: usize = 8;

/// The colours of one chart theme.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Theme {
    /// Short name, `"light"` or `"dark"`.
    pub name: &'static str,
    /// Chart background (and the fill behind a PNG export).
    pub background: Rgb,
    /// Titles, axis labels, legend text.
    pub text: Rgb,
    /// Tick labels and secondary text.
    pub muted: Rgb,
    /// Axis lines and tick marks.
    pub axis: Rgb,
    /// Grid lines (deliberately faint).
    pub grid: Rgb,
    /// Tooltip background.
    pub panel: Rgb,
    /// Hatching of infeasible heatmap cells.
    pub infeasible: Rgb,
    /// Reference lines and bands (y = x, ±N %).
    pub reference: Rgb,
    /// A bar that may not fit under a limit (the page's `--warn`).
    pub warn: Rgb,
    /// A bar over a limit (the page's `--bad`).
    pub alert: Rgb,
    /// Categorical series colours.
    pub series: [Rgb; SERIES_COLORS],
}

const fn c(hex: u32) -> Rgb {
    Rgb::from_u32(hex)
}

/// Colours for a light page.
pub const LIGHT: Theme = Theme {
    name: "light",
    background: c(0xffffff),
    text: c(0x1f2328),
    muted: c(0x57606a),
    axis: c(0x6e7781),
    grid: c(0xe1e5ea),
    panel: c(0xffffff),
    infeasible: c(0x8c959f),
    reference: c(0x57606a),
    warn: c(0x7a5200),
    alert: c(0xc0362c),
    series: [
        c(0x0072b2), // blue (Okabe–Ito)
        c(0xd55e00), // vermillion (Okabe–Ito)
        c(0x009e73), // bluish green (Okabe–Ito)
        c(0xcc79a7), // reddish purple (Okabe–Ito)
        c(0x333333), // near black
        c(0x7f3fd9), // violet
        c(0x7a4513), // brown
        c(0x1a2b8c), // navy
    ],
};

/// Colours for a dark page.
pub const DARK: Theme = Theme {
    name: "dark",
    background: c(0x0d1117),
    text: c(0xe6edf3),
    muted: c(0x9198a1),
    axis: c(0x7d8590),
    grid: c(0x262c36),
    panel: c(0x161b22),
    infeasible: c(0x6e7681),
    reference: c(0x9198a1),
    warn: c(0xd4a72c),
    alert: c(0xf47067),
    series: [
        c(0x56b4e9), // sky blue (Okabe–Ito)
        c(0xe69f00), // orange (Okabe–Ito)
        c(0x009e73), // bluish green (Okabe–Ito)
        c(0xcc79a7), // reddish purple (Okabe–Ito)
        c(0xeeeeee), // near white
        c(0xb08cff), // lavender
        c(0xc06a2b), // copper
        c(0xf0e442), // yellow (Okabe–Ito)
    ],
};

impl Theme {
    /// The colour of series `index` (cycling after [`SERIES_COLORS`]).
    pub fn series_color(&self, index: usize) -> Rgb {
        self.series[index % SERIES_COLORS]
    }
}

/// A kind of colour-vision deficiency, for simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deficiency {
    /// No deficiency (identity).
    None,
    /// Missing L cones (red).
    Protanopia,
    /// Missing M cones (green).
    Deuteranopia,
    /// Missing S cones (blue).
    Tritanopia,
}

impl Deficiency {
    /// All four, including normal vision.
    pub const ALL: [Deficiency; 4] =
        [Deficiency::None, Deficiency::Protanopia, Deficiency::Deuteranopia, Deficiency::Tritanopia];

    /// Machado et al. (2009) severity-1.0 matrix, applied to linear-light RGB.
    fn matrix(self) -> [[f64; 3]; 3] {
        match self {
            Deficiency::None => [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            Deficiency::Protanopia => {
                [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
            }
            Deficiency::Deuteranopia => {
                [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
            }
            Deficiency::Tritanopia => {
                [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
            }
        }
    }

    /// CIELAB coordinates of `color` as seen with this deficiency.
    pub fn simulate_lab(self, color: Rgb) -> [f64; 3] {
        let linear = color.to_linear();
        let m = self.matrix();
        let seen = m.map(|row| (row[0] * linear[0] + row[1] * linear[1] + row[2] * linear[2]).clamp(0.0, 1.0));
        Rgb::lab_of_linear(seen)
    }
}

/// The smallest ΔE*ab between any two of `colors` over all simulated deficiencies (and normal
/// vision): how distinguishable the worst pair is for the worst-served viewer.
pub fn min_pairwise_distance(colors: &[Rgb]) -> f64 {
    let mut worst = f64::INFINITY;
    for d in Deficiency::ALL {
        let labs: Vec<[f64; 3]> = colors.iter().map(|&c| d.simulate_lab(c)).collect();
        for i in 0..labs.len() {
            for j in i + 1..labs.len() {
                worst = worst.min(delta_e(labs[i], labs[j]));
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_colours_have_graphical_contrast_on_their_background() {
        for theme in [LIGHT, DARK] {
            for (i, s) in theme.series.iter().enumerate() {
                for bg in [theme.background, theme.panel] {
                    let ratio = s.contrast(bg);
                    assert!(ratio >= 3.0, "{} series {i} {s} on {bg}: {ratio:.2}", theme.name);
                }
            }
        }
    }

    #[test]
    fn series_colours_stay_apart_under_colour_vision_deficiencies() {
        for theme in [LIGHT, DARK] {
            let d = min_pairwise_distance(&theme.series);
            assert!(d >= 12.0, "{}: worst pair ΔE {d:.1}", theme.name);
        }
        // The check has teeth: plain Okabe–Ito orange next to yellow is too close for deuteranopes
        // to pass a stricter bar, and two equal colours are at distance 0.
        let oi = [c(0xe69f00), c(0xf0e442)];
        assert!(min_pairwise_distance(&oi) < 18.0);
        assert_eq!(min_pairwise_distance(&[c(0x123456), c(0x123456)]), 0.0);
    }

    #[test]
    fn neutral_colours_are_readable() {
        for theme in [LIGHT, DARK] {
            assert!(theme.text.contrast(theme.background) >= 7.0, "{} text", theme.name);
            assert!(theme.muted.contrast(theme.background) >= 4.5, "{} muted", theme.name);
            assert!(theme.text.contrast(theme.panel) >= 7.0, "{} tooltip text", theme.name);
            assert!(theme.axis.contrast(theme.background) >= 3.0, "{} axis", theme.name);
            assert!(theme.infeasible.contrast(theme.background) >= 2.0, "{} infeasible", theme.name);
            // The limit marks are glyphs and outlines that say "may not fit" / "does not fit".
            assert!(theme.warn.contrast(theme.background) >= 4.5, "{} warn", theme.name);
            assert!(theme.alert.contrast(theme.background) >= 4.5, "{} alert", theme.name);
            let grid = theme.grid.contrast(theme.background);
            assert!((1.1..2.0).contains(&grid), "{} grid {grid:.2}: visible but quiet", theme.name);
        }
    }

    #[test]
    fn simulation_keeps_greys_and_cycles_indices() {
        // Greys are (nearly) unchanged by every simulation: their cone responses are balanced.
        let grey = c(0x808080);
        for d in Deficiency::ALL {
            let lab = d.simulate_lab(grey);
            assert!(delta_e(lab, grey.lab()) < 1.0, "{d:?}: {lab:?}");
        }
        // A red is pulled far from itself for protanopes.
        assert!(delta_e(Deficiency::Protanopia.simulate_lab(c(0xff0000)), c(0xff0000).lab()) > 30.0);
        assert_eq!(LIGHT.series_color(0), LIGHT.series_color(SERIES_COLORS));
        assert_ne!(LIGHT.series_color(1), LIGHT.series_color(2));
    }
}

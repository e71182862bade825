//! Point markers: one shape per series, so series stay distinguishable without colour (print in
//! grey, colour-vision deficiency, more series than colours). Each shape is a closed SVG path of
//! about the same area as a circle of the given radius.

use crate::path::{coord, polygon_path};
use std::f64::consts::{FRAC_PI_2, PI};

/// A marker shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerShape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Plus,
    Cross,
    Star,
}

impl MarkerShape {
    /// All shapes, in the order series use them.
    pub const ALL: [MarkerShape; 8] = [
        MarkerShape::Circle,
        MarkerShape::Square,
        MarkerShape::TriangleUp,
        MarkerShape::Diamond,
        MarkerShape::TriangleDown,
        MarkerShape::Plus,
        MarkerShape::Cross,
        MarkerShape::Star,
    ];

    /// The shape of series `index` (cycling).
    pub fn for_series(index: usize) -> MarkerShape {
        MarkerShape::ALL[index % MarkerShape::ALL.len()]
    }

    /// Path data for this marker centred on `(x, y)`, with an area close to that of a circle of
    /// radius `r` (so no shape looks heavier than the others).
    pub fn path(self, x: f64, y: f64, r: f64) -> String {
        let area = PI * r * r;
        match self {
            MarkerShape::Circle => {
                let (l, rr) = (coord(x - r), coord(r));
                format!("M{l},{y}a{rr},{rr} 0 1,0 {d},0a{rr},{rr} 0 1,0 -{d},0Z", y = coord(y), d = coord(2.0 * r))
            }
            MarkerShape::Square => {
                let h = area.sqrt() / 2.0;
                polygon_path(&[(x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)])
            }
            MarkerShape::Diamond => {
                // a square turned by 45°: half-diagonal h has area 2h²
                let h = (area / 2.0).sqrt();
                polygon_path(&[(x, y - h), (x + h, y), (x, y + h), (x - h, y)])
            }
            MarkerShape::TriangleUp | MarkerShape::TriangleDown => {
                // equilateral triangle with circumradius c has area (3√3/4) c²
                let c = (area * 4.0 / (3.0 * 3f64.sqrt())).sqrt();
                let sign = if self == MarkerShape::TriangleUp { -1.0 } else { 1.0 };
                let pts: Vec<(f64, f64)> = (0..3)
                    .map(|k| {
                        let a = sign * FRAC_PI_2 + f64::from(k) * 2.0 * PI / 3.0;
                        (x + c * a.cos(), y + c * a.sin())
                    })
                    .collect();
                polygon_path(&pts)
            }
            MarkerShape::Plus | MarkerShape::Cross => {
                // a plus of arm half-length h and half-width w = h/3 has area 4·(2w·h) - (2w)² = 20h²/9
                let h = (area * 9.0 / 20.0).sqrt();
                let w = h / 3.0;
                let plus = [
                    (-w, -h),
                    (w, -h),
                    (w, -w),
                    (h, -w),
                    (h, w),
                    (w, w),
                    (w, h),
                    (-w, h),
                    (-w, w),
                    (-h, w),
                    (-h, -w),
                    (-w, -w),
                ];
                let turn = if self == MarkerShape::Cross { PI / 4.0 } else { 0.0 };
                let (s, c) = turn.sin_cos();
                let pts: Vec<(f64, f64)> =
                    plus.iter().map(|&(dx, dy)| (x + dx * c - dy * s, y + dx * s + dy * c)).collect();
                polygon_path(&pts)
            }
            MarkerShape::Star => {
                // five points, inner radius 0.45 of the outer; area = 5·R·ρ·sin(36°) with ρ = 0.45R
                let outer = (area / (5.0 * 0.45 * (PI / 5.0).sin())).sqrt();
                let pts: Vec<(f64, f64)> = (0..10)
                    .map(|k| {
                        let rad = if k % 2 == 0 { outer } else { 0.45 * outer };
                        let a = -FRAC_PI_2 + f64::from(k) * PI / 5.0;
                        (x + rad * a.cos(), y + rad * a.sin())
                    })
                    .collect();
                polygon_path(&pts)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shoelace area of the polygon in a `M…L…Z` path (straight segments only).
    fn polygon_area(d: &str) -> f64 {
        let pts: Vec<(f64, f64)> = d
            .trim_end_matches('Z')
            .split(['M', 'L'])
            .filter(|s| !s.is_empty())
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        let n = pts.len();
        (0..n).map(|i| pts[i].0 * pts[(i + 1) % n].1 - pts[(i + 1) % n].0 * pts[i].1).sum::<f64>().abs() / 2.0
    }

    #[test]
    fn polygon_markers_match_the_circle_area() {
        let r = 10.0;
        let circle = PI * r * r;
        for shape in MarkerShape::ALL.into_iter().filter(|s| *s != MarkerShape::Circle) {
            let area = polygon_area(&shape.path(100.0, 50.0, r));
            assert!((area / circle - 1.0).abs() < 0.01, "{shape:?}: {area:.1} vs {circle:.1}");
        }
    }

    #[test]
    fn circle_is_two_arcs_around_the_centre() {
        assert_eq!(MarkerShape::Circle.path(10.0, 20.0, 3.0), "M7,20a3,3 0 1,0 6,0a3,3 0 1,0 -6,0Z");
    }

    #[test]
    fn triangles_point_the_right_way_and_shapes_cycle() {
        let up = MarkerShape::TriangleUp.path(0.0, 0.0, 5.0);
        assert!(up.starts_with("M0,-"), "apex above the centre: {up}");
        let down = MarkerShape::TriangleDown.path(0.0, 0.0, 5.0);
        assert!(down.starts_with("M0,") && !down.starts_with("M0,-"), "apex below: {down}");
        assert_eq!(MarkerShape::for_series(0), MarkerShape::Circle);
        assert_eq!(MarkerShape::for_series(9), MarkerShape::Square);
        let distinct: std::collections::HashSet<String> =
            MarkerShape::ALL.iter().map(|s| s.path(0.0, 0.0, 4.0)).collect();
        assert_eq!(distinct.len(), MarkerShape::ALL.len());
    }
}

/// How one series of a line chart looks: a colour (of [`crate::palette::SERIES_COLORS`]), a
/// marker shape and a dash pattern. The first 8 series differ in colour and marker; each further
/// block of 8 shifts the marker by one and changes the dash, so the first
/// [`DISTINCT_SERIES`] series are pairwise distinct (in colour, marker and dash together), and
/// no two of the first 24 share both colour and marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeriesStyle {
    /// Colour index (`fc-s{color}`).
    pub color: usize,
    /// Marker shape.
    pub marker: MarkerShape,
    /// SVG `stroke-dasharray` (`None`: solid).
    pub dash: Option<&'static str>,
}

/// Dash patterns of the blocks of 8 series: solid, dashed, dotted.
pub const DASHES: [Option<&str>; 3] = [None, Some("7 4"), Some("2 3")];

/// Series that get pairwise distinct styles (8 colours × 3 dash patterns).
pub const DISTINCT_SERIES: usize = 24;

/// The style of series `index`.
pub fn series_style(index: usize) -> SeriesStyle {
    let block = index / MarkerShape::ALL.len();
    SeriesStyle {
        color: index % crate::palette::SERIES_COLORS,
        marker: MarkerShape::ALL[(index + block) % MarkerShape::ALL.len()],
        dash: DASHES[block % DASHES.len()],
    }
}

#[cfg(test)]
mod series_style_tests {
    use super::*;

    #[test]
    fn the_first_24_series_are_pairwise_distinct_and_never_share_colour_and_marker() {
        for i in 0..DISTINCT_SERIES {
            for j in 0..i {
                let (a, b) = (series_style(i), series_style(j));
                assert_ne!(a, b, "{i} {j}");
                assert!(!(a.color == b.color && a.marker == b.marker), "{i} {j} share colour and marker");
            }
        }
        // The first eight keep today's look: colour i, marker i, solid.
        for i in 0..8 {
            assert_eq!(series_style(i), SeriesStyle { color: i, marker: MarkerShape::ALL[i], dash: None });
        }
    }
}

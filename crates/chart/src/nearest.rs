//! Hover hit-testing: the data point nearest to the cursor, in screen space.

/// A point found under the cursor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Series (or group) index.
    pub series: usize,
    /// Point index within the series.
    pub index: usize,
    /// Screen position of the point.
    pub pos: (f64, f64),
    /// Distance from the cursor (SVG user units).
    pub distance: f64,
}

/// A candidate point: `(series, index, screen position)`.
pub type NearPoint = (usize, usize, (f64, f64));

/// The candidate nearest to `cursor` by Euclidean distance, if it lies within `max_distance`.
/// Ties go to the first candidate; points with non-finite coordinates are ignored.
pub fn nearest(candidates: impl IntoIterator<Item = NearPoint>, cursor: (f64, f64), max_distance: f64) -> Option<Hit> {
    let mut best: Option<Hit> = None;
    for (series, index, pos) in candidates {
        let distance = (pos.0 - cursor.0).hypot(pos.1 - cursor.1);
        if !distance.is_finite() || distance > max_distance {
            continue;
        }
        if best.is_none_or(|b| distance < b.distance) {
            best = Some(Hit { series, index, pos, distance });
        }
    }
    best
}

/// For line charts: the candidate with the nearest x (within `max_dx`), ties on x broken by the
/// nearest y. Lets a user sweep along the x axis without aiming at a line exactly.
pub fn nearest_by_x(candidates: impl IntoIterator<Item = NearPoint>, cursor: (f64, f64), max_dx: f64) -> Option<Hit> {
    let mut best: Option<(f64, f64, Hit)> = None;
    for (series, index, pos) in candidates {
        let (dx, dy) = ((pos.0 - cursor.0).abs(), (pos.1 - cursor.1).abs());
        if !dx.is_finite() || !dy.is_finite() || dx > max_dx {
            continue;
        }
        // x distances within half a unit count as the same column
        let better = match &best {
            None => true,
            Some((bdx, bdy, _)) => dx + 0.5 < *bdx || ((dx - bdx).abs() <= 0.5 && dy < *bdy),
        };
        if better {
            let distance = dx.hypot(dy);
            best = Some((dx, dy, Hit { series, index, pos, distance }));
        }
    }
    best.map(|(_, _, hit)| hit)
}

/// Keyboard navigation over `len` hover targets: the new selection after `key` (a DOM
/// `KeyboardEvent.key`), or `None` if the key is not a navigation key (let the page have it).
/// Left/Right step by 1, Up/Down by `stride` (e.g. one row of a heatmap), Home/End jump to the
/// ends, Escape clears the selection. The first arrow press selects the first (or last) target;
/// steps stop at the ends.
pub fn keyboard_step(key: &str, current: Option<usize>, len: usize, stride: usize) -> Option<Option<usize>> {
    if len == 0 {
        return (key == "Escape").then_some(None);
    }
    let last = len - 1;
    let stride = stride.max(1);
    let step = |forward: bool, by: usize| match current {
        None => Some(if forward { 0 } else { last }),
        Some(i) if forward => Some((i + by).min(last)),
        Some(i) => Some(i.saturating_sub(by)),
    };
    match key {
        "ArrowRight" => Some(step(true, 1)),
        "ArrowLeft" => Some(step(false, 1)),
        "ArrowDown" => Some(step(true, stride)),
        "ArrowUp" => Some(step(false, stride)),
        "Home" => Some(Some(0)),
        "End" => Some(Some(last)),
        "Escape" => Some(None),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<NearPoint> {
        vec![(0, 0, (10.0, 10.0)), (0, 1, (50.0, 40.0)), (1, 0, (10.0, 80.0)), (1, 1, (50.0, 45.0))]
    }

    #[test]
    fn nearest_point_within_radius() {
        let hit = nearest(sample(), (48.0, 44.0), 20.0).unwrap();
        assert_eq!((hit.series, hit.index), (1, 1));
        assert!((hit.distance - (4.0f64 + 1.0).sqrt()).abs() < 1e-12);
        assert_eq!(hit.pos, (50.0, 45.0));
        assert_eq!(nearest(sample(), (200.0, 200.0), 20.0), None, "too far");
        assert_eq!(nearest(Vec::new(), (0.0, 0.0), 100.0), None);
    }

    #[test]
    fn ties_go_to_the_first_and_nan_is_ignored() {
        let pts = vec![(0, 0, (f64::NAN, 0.0)), (0, 1, (0.0, 10.0)), (1, 0, (0.0, -10.0))];
        let hit = nearest(pts, (0.0, 0.0), 50.0).unwrap();
        assert_eq!((hit.series, hit.index), (0, 1));
    }

    #[test]
    fn nearest_by_x_prefers_the_column_then_the_line() {
        // Cursor far from every point in y but near x = 50: picks the column, then the closer y.
        let hit = nearest_by_x(sample(), (52.0, 100.0), 30.0).unwrap();
        assert_eq!((hit.series, hit.index), (1, 1));
        let hit = nearest_by_x(sample(), (12.0, 0.0), 30.0).unwrap();
        assert_eq!((hit.series, hit.index), (0, 0));
        assert_eq!(nearest_by_x(sample(), (200.0, 0.0), 30.0), None);
    }

    #[test]
    fn keyboard_navigation() {
        assert_eq!(keyboard_step("ArrowRight", None, 5, 1), Some(Some(0)));
        assert_eq!(keyboard_step("ArrowLeft", None, 5, 1), Some(Some(4)));
        assert_eq!(keyboard_step("ArrowRight", Some(2), 5, 1), Some(Some(3)));
        assert_eq!(keyboard_step("ArrowRight", Some(4), 5, 1), Some(Some(4)), "stops at the end");
        assert_eq!(keyboard_step("ArrowLeft", Some(0), 5, 1), Some(Some(0)));
        assert_eq!(keyboard_step("ArrowDown", Some(1), 12, 4), Some(Some(5)));
        assert_eq!(keyboard_step("ArrowUp", Some(1), 12, 4), Some(Some(0)));
        assert_eq!(keyboard_step("ArrowDown", Some(10), 12, 4), Some(Some(11)));
        assert_eq!(keyboard_step("End", None, 12, 4), Some(Some(11)));
        assert_eq!(keyboard_step("Home", Some(7), 12, 4), Some(Some(0)));
        assert_eq!(keyboard_step("Escape", Some(3), 12, 4), Some(None));
        assert_eq!(keyboard_step("a", Some(3), 12, 4), None, "other keys pass through");
        assert_eq!(keyboard_step("ArrowRight", None, 0, 1), None);
        assert_eq!(keyboard_step("Escape", None, 0, 1), Some(None));
    }
}

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
pub type Candidate = (usize, usize, (f64, f64));

/// The candidate nearest to `cursor` by Euclidean distance, if it lies within `max_distance`.
/// Ties go to the first candidate; points with non-finite coordinates are ignored.
pub fn nearest(candidates: impl IntoIterator<Item = Candidate>, cursor: (f64, f64), max_distance: f64) -> Option<Hit> {
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
pub fn nearest_by_x(candidates: impl IntoIterator<Item = Candidate>, cursor: (f64, f64), max_dx: f64) -> Option<Hit> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Candidate> {
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
}

//! Leak detection: the least-squares slope of a series over time.

/// A least-squares line through `(t, y)` points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Change of `y` per unit of `t`.
    pub slope: f64,
    /// `y` at `t = 0`.
    pub intercept: f64,
    /// Points used.
    pub points: usize,
}

/// Fits a line through `points`; `None` with fewer than two distinct `t`.
pub fn fit(points: impl IntoIterator<Item = (f64, f64)>) -> Option<Fit> {
    let pts: Vec<(f64, f64)> = points.into_iter().collect();
    let n = pts.len() as f64;
    if pts.len() < 2 {
        return None;
    }
    let mt = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mt).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = pts.iter().map(|p| (p.0 - mt) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    Some(Fit {
        slope,
        intercept: my - slope * mt,
        points: pts.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_known_line_and_ignores_symmetric_noise() {
        // y = 3t + 5 with +1/-1 alternating noise: the noise has zero
        // covariance with t over whole pairs, so the fit is exact.
        let pts = (0..100).map(|i| {
            let t = i as f64;
            let noise = if i % 2 == 0 { 1.0 } else { -1.0 };
            (t, 3.0 * t + 5.0 + noise)
        });
        let f = fit(pts).unwrap();
        assert!((f.slope - 3.0).abs() < 1e-3, "{f:?}");
        assert!((f.intercept - 5.0).abs() < 0.1, "{f:?}");
    }

    #[test]
    fn flat_and_degenerate_series() {
        let f = fit((0..10).map(|i| (i as f64, 7.0))).unwrap();
        assert_eq!(f.slope, 0.0);
        assert!(fit([(1.0, 2.0)]).is_none());
        assert!(fit([(1.0, 2.0), (1.0, 3.0)]).is_none());
    }
}

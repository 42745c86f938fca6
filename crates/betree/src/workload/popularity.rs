//! Zipf popularity: how attributes and values are ranked and drawn.

/// Cumulative Zipf weights over `n` ranks, for sampling by binary search.
#[derive(Debug, Clone)]
pub(super) struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    pub(super) fn new(n: usize, s: f64) -> Zipf {
        let mut acc = 0.0;
        let cdf = (1..=n)
            .map(|r| {
                acc += 1.0 / (r as f64).powf(s);
                acc
            })
            .collect();
        Zipf { cdf }
    }

    /// A rank in `0..n`, rank 0 the most popular.
    pub(super) fn sample(&self, rng: &mut fastrand::Rng) -> usize {
        let total = *self.cdf.last().expect("at least one rank");
        let u = rng.f64() * total;
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }

    /// The fewest top ranks whose popularity adds up to `mass` (0 to 1).
    pub(super) fn head(&self, mass: f64) -> usize {
        let total = *self.cdf.last().expect("at least one rank");
        (self.cdf.partition_point(|&c| c < mass * total) + 1).min(self.cdf.len())
    }
}

//! Calibrating a shape to its target match rate: bisection of the
//! looseness on a fixed sample, so that every writer of one shape gets the
//! same looseness without talking to the others.

use super::Adtech;
use crate::{Event, Index, Result, Schema};

impl Adtech {
    /// Bisects the looseness until the sample's match rate meets `target`.
    /// The rate grows with the looseness (same draws, wider predicates),
    /// up to the sampling noise of one fixed sample.
    pub(super) fn calibrate(&mut self, target: f64) -> Result<()> {
        let schema = Schema::from_domains(self.domains())?;
        let mut rng = fastrand::Rng::with_seed(CALIBRATION_SEED ^ 1);
        let events = (0..CALIBRATION_EVENTS)
            .map(|_| Event::from_json(&schema, &self.event_json(&mut rng)))
            .collect::<Result<Vec<_>>>()?;
        let (mut lo, mut hi) = (-1.0f64, 1.0f64);
        let rate_at = |a: &mut Adtech, looseness: f64| -> Result<f64> {
            a.looseness = looseness;
            let mut index = Index::new(schema.clone());
            let mut rng = fastrand::Rng::with_seed(CALIBRATION_SEED);
            for id in 1..=CALIBRATION_EXPRS as u64 {
                index.insert(id, &a.expression(&mut rng))?;
            }
            let mut matched = 0usize;
            for ev in &events {
                matched += index.search(ev)?.len();
            }
            Ok(matched as f64 / (CALIBRATION_EXPRS * CALIBRATION_EVENTS) as f64)
        };
        let mut best = (f64::INFINITY, 0.0, 0.0);
        for _ in 0..CALIBRATION_STEPS {
            let mid = (lo + hi) / 2.0;
            let rate = rate_at(self, mid)?;
            let miss = (rate / target).ln().abs();
            if miss < best.0 {
                best = (miss, mid, rate);
            }
            if rate < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // The ends, which bisection only approaches.
        for end in [-1.0, 1.0] {
            if (end - lo).abs() < 1e-3 || (end - hi).abs() < 1e-3 {
                let rate = rate_at(self, end)?;
                let miss = (rate / target).ln().abs();
                if miss < best.0 {
                    best = (miss, end, rate);
                }
            }
        }
        self.looseness = best.1;
        self.calibrated = Some(best.2);
        Ok(())
    }
}

/// Expressions and events of the calibration's sample: enough pairs
/// (48,000) that a 2 % rate is measured within about 5 %.
const CALIBRATION_EXPRS: usize = 600;

const CALIBRATION_EVENTS: usize = 80;

/// Bisection steps: the looseness to within 1/512.
const CALIBRATION_STEPS: usize = 10;

/// The calibration sample's seeds, fixed so that a shape always gets the
/// same looseness (gen-exprs and gen-events agree without talking).
const CALIBRATION_SEED: u64 = 0xca1_1b8a7e;

use std::time::Duration;

use hdrhistogram::Histogram;
use zstdkit::Recipe;

use super::outcome::growth;
use super::*;
use crate::pool::{ContextCounts, PoolKind};

fn series(rss_mib: impl Fn(f64) -> f64, ctx: impl Fn(f64) -> f64) -> Vec<Sample> {
    (1..=120)
        .map(|s| {
            let t = s as f64;
            Sample {
                at: Duration::from_secs(s),
                blocks: 0,
                mb_per_s: 0.0,
                mb_per_cpu_s: 0.0,
                ratio: 0.0,
                os_threads: 3,
                tasks: 0,
                rss_bytes: (rss_mib(t) * (1 << 20) as f64) as u64,
                contexts_alive: ctx(t) as u64,
                contexts_created: 0,
            }
        })
        .collect()
}

fn judged(growth: Option<Growth>, soak: Option<SoakLimits>) -> Outcome {
    let h = || Histogram::new(3).unwrap();
    Outcome {
        pool: PoolKind::Pool,
        runtime: Runtime::Tokio,
        measured: Duration::from_secs(1),
        cpu: Duration::from_secs(1),
        totals: Totals {
            produced: 10,
            verified: 10,
            ..Totals::default()
        },
        samples: Vec::new(),
        compress: h(),
        decompress: h(),
        end_to_end: h(),
        contexts: ContextCounts::default(),
        contexts_end: ContextCounts::default(),
        peak_rss_bytes: 0,
        peak_threads: 0,
        growth,
        soak,
        first_corrupt: None,
        first_lost: None,
        first_duplicated: None,
    }
}

#[test]
fn a_soak_that_could_not_judge_growth_fails() {
    let limits = SoakLimits::default();
    let flat = |samples| Growth {
        rss_mib_per_min: 0.0,
        contexts_per_min: 0.0,
        samples,
        limits: Some(limits),
    };
    // A late sampler (or folded rounds) can leave a soak with too few
    // points, or none: that is a failure, not a silent pass.
    for (growth, why) in [
        (None, "fewer than 3 sample(s)"),
        (Some(flat(MIN_SOAK_SAMPLES - 1)), "9 sample(s)"),
    ] {
        let f = judged(growth, Some(limits)).failures();
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].starts_with("soak too short to judge growth"), "{f:?}");
        assert!(f[0].contains(why), "{f:?}");
    }
    assert!(judged(Some(flat(MIN_SOAK_SAMPLES)), Some(limits)).passed());
    // Without a soak, nothing is judged, so nothing is missing.
    assert!(judged(None, None).passed());
}

#[test]
fn defaults_are_the_proof_of_concepts() {
    // gostress: -producers 100 -consumers 100 -interval 10ms
    // -min_size 2048 -max_size 2048 -duration 30s -level 3.
    let c = Config::default();
    assert_eq!(c.params.compression_level(), 3);
    assert_eq!(c.params, Recipe::Balanced.params().checksum(false));
    assert_eq!((c.producers, c.consumers), (100, 100));
    assert_eq!(c.interval, Duration::from_millis(10));
    assert_eq!((c.workload.min_size, c.workload.max_size), (2048, 2048));
    assert_eq!(c.duration, Duration::from_secs(30));
    assert!(!c.replay);
}

#[test]
fn growth_is_judged_after_warm_up_only() {
    let limits = Some(SoakLimits::default());
    // Flat after a 20 s warm-up ramp: not growing.
    let flat = series(
        |t| 30.0 + 10.0 * (t.min(20.0) / 20.0),
        |t| if t < 20.0 { t } else { 20.0 },
    );
    let g = growth(&flat, Duration::from_secs(20), limits).unwrap();
    assert!(
        g.rss_mib_per_min.abs() < 1e-6 && g.contexts_per_min.abs() < 1e-6,
        "{g:?}"
    );
    assert!(!g.growing());
    // 2 MiB per minute of RSS growth: one MiB every 30 s.
    let leak = series(|t| 30.0 + t / 30.0, |_| 8.0);
    let g = growth(&leak, Duration::from_secs(20), limits).unwrap();
    assert!((g.rss_mib_per_min - 2.0).abs() < 0.05, "{g:?}");
    assert!(g.growing());
    // A context every 10 s: 6 per minute.
    let ctx = series(|_| 30.0, |t| (t / 10.0).floor());
    let g = growth(&ctx, Duration::from_secs(20), limits).unwrap();
    assert!((g.contexts_per_min - 6.0).abs() < 0.3, "{g:?}");
    assert!(g.growing());
    // Reported but not judged without limits.
    assert!(
        !growth(&ctx, Duration::from_secs(20), None)
            .unwrap()
            .growing()
    );
}

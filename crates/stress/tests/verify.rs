//! Every strategy on every runtime verifies every block it produces, and
//! deliberately corrupted or dropped blocks are caught. The oracle is the
//! producer's own count of blocks sent: every one of them must come back
//! from a consumer equal to its original, or be counted as corrupt or lost.

use std::time::Duration;

use stress::{Config, Fault, FaultKind, MIN_SOAK_SAMPLES, PoolKind, Runtime, SoakLimits, Workload};

/// The sampling period of [`short`] runs.
const PERIOD: Duration = Duration::from_millis(50);

/// The sampler wakes on a fixed grid (`k × period`, capped at the end of
/// the run) and stops at the first sample at or past the end. A loaded
/// machine can only make it late, never early, so rather than count
/// samples (a 100 ms stall on a busy 2-core box turns five samples into
/// two) this checks what lateness cannot break: no sample before its grid
/// point, never more samples than grid points, and a last sample that
/// covers the whole run.
fn sampled_on_the_grid(samples: &[stress::Sample], duration: Duration, period: Duration) {
    let points = duration.as_nanos().div_ceil(period.as_nanos()) as usize;
    assert!(
        (1..=points).contains(&samples.len()),
        "{} samples for {points} grid points",
        samples.len()
    );
    for (k, s) in (1u32..).zip(samples) {
        let due = (period * k).min(duration);
        assert!(s.at >= due, "sample {k} at {:?}, due at {due:?}", s.at);
    }
    assert!(samples.windows(2).all(|w| w[0].at < w[1].at));
    let last = samples.last().expect("at least one sample").at;
    assert!(last >= duration, "the last sample ({last:?}) ends the run");
}

fn short(pool: PoolKind, runtime: Runtime) -> Config {
    Config {
        pool,
        runtime,
        producers: 8,
        consumers: 6,
        interval: Duration::ZERO,
        duration: Duration::from_millis(250),
        sample_every: PERIOD,
        channel_capacity: 64,
        workload: Workload::uuids(100, 3000),
        ..Config::default()
    }
}

#[test]
fn every_pool_on_every_runtime_verifies_every_block() {
    for runtime in [Runtime::Tokio, Runtime::Threads] {
        for pool in PoolKind::ALL {
            let mut samples = 0;
            let out = stress::run(&short(pool, runtime), &mut |_| samples += 1).unwrap();
            let t = out.totals;
            assert!(out.passed(), "{pool} {runtime:?}: {:?}", out.failures());
            assert!(
                t.produced > 10,
                "{pool} {runtime:?}: only {} blocks",
                t.produced
            );
            assert_eq!(t.verified, t.produced, "{pool} {runtime:?}");
            assert_eq!((t.lost, t.corrupt, t.duplicated), (0, 0, 0));
            assert_eq!(samples, out.samples.len());
            sampled_on_the_grid(&out.samples, Duration::from_millis(250), PERIOD);
            // Histograms hold one sample per verified block (no warm-up).
            assert_eq!(out.decompress.len(), t.verified);
            assert_eq!(out.end_to_end.len(), t.verified);
            assert_eq!(out.compress.len(), t.produced, "{pool} {runtime:?}");
            let c = out.contexts;
            assert!(c.created() >= 2);
            match pool {
                // 4 per core of each kind, made up front, never more.
                PoolKind::ChanPool => {
                    let cores = std::thread::available_parallelism().unwrap().get() as u64;
                    assert_eq!((c.created(), c.alive()), (8 * cores, 8 * cores));
                }
                // One per block of each kind.
                PoolKind::Fresh => {
                    let end = out.contexts_end;
                    assert_eq!((end.created(), end.alive()), (2 * t.produced, 0));
                }
                PoolKind::Pool => assert!(c.created() < t.produced, "contexts are reused"),
                // At most one of each kind per runtime thread, freed when
                // the threads exit.
                PoolKind::ThreadLocal => {
                    assert!(c.created() < t.produced, "contexts are reused");
                    assert_eq!(out.contexts_end.alive(), 0);
                }
            }
            assert!(out.ratio() > 1.2, "UUID text compresses: {}", out.ratio());
        }
    }
}

#[test]
fn paced_producers_are_paced() {
    let cfg = Config {
        interval: Duration::from_millis(20),
        producers: 5,
        duration: Duration::from_millis(300),
        ..short(PoolKind::Pool, Runtime::Tokio)
    };
    let out = stress::run(&cfg, &mut |_| {}).unwrap();
    assert!(out.passed(), "{:?}", out.failures());
    // 5 producers, one block per ≥ 20 ms each, over 300 ms: at most 5 × 15.
    assert!(out.totals.produced <= 5 * 15 + 5, "{}", out.totals.produced);
    assert!(out.totals.produced >= 5);
}

#[test]
fn a_corrupted_block_is_detected_and_fails_the_run() {
    for runtime in [Runtime::Tokio, Runtime::Threads] {
        let cfg = Config {
            faults: vec![
                Fault {
                    kind: FaultKind::CorruptFrame,
                    block: 3,
                },
                Fault {
                    kind: FaultKind::CorruptPayload,
                    block: 7,
                },
            ],
            ..short(PoolKind::ThreadLocal, runtime)
        };
        let out = stress::run(&cfg, &mut |_| {}).unwrap();
        let t = out.totals;
        assert_eq!(t.corrupt, 2, "{runtime:?}");
        assert_eq!(t.lost, 0);
        assert_eq!(t.verified + 2, t.produced);
        assert!(!out.passed());
        let (block, _) = out.first_corrupt.clone().unwrap();
        assert_eq!(block, 3);
        assert!(
            out.failures()
                .iter()
                .any(|f| f.contains("2 block(s) corrupt"))
        );
    }
}

#[test]
fn a_dropped_block_is_counted_lost() {
    for runtime in [Runtime::Tokio, Runtime::Threads] {
        let cfg = Config {
            faults: vec![Fault {
                kind: FaultKind::Drop,
                block: 5,
            }],
            ..short(PoolKind::Pool, runtime)
        };
        let out = stress::run(&cfg, &mut |_| {}).unwrap();
        let t = out.totals;
        assert_eq!((t.lost, t.corrupt, t.duplicated), (1, 0, 0), "{runtime:?}");
        assert_eq!(t.verified + 1, t.produced);
        assert!(!out.passed());
        assert!(
            out.failures()
                .iter()
                .any(|f| f == "1 block(s) lost (first: block 5)")
        );
    }
}

#[test]
fn a_duplicated_block_is_caught_even_when_it_hides_a_lost_one() {
    for runtime in [Runtime::Tokio, Runtime::Threads] {
        let cfg = Config {
            faults: vec![
                Fault {
                    kind: FaultKind::Drop,
                    block: 5,
                },
                Fault {
                    kind: FaultKind::Duplicate,
                    block: 9,
                },
            ],
            ..short(PoolKind::Pool, runtime)
        };
        let out = stress::run(&cfg, &mut |_| {}).unwrap();
        let t = out.totals;
        // As many deliveries verified as blocks produced: counting
        // produced − verified would call this run clean.
        assert_eq!(t.verified, t.produced, "{runtime:?}");
        assert_eq!((t.lost, t.duplicated, t.corrupt), (1, 1, 0), "{runtime:?}");
        assert_eq!((out.first_lost, out.first_duplicated), (Some(5), Some(9)));
        assert!(!out.passed());
        let f = out.failures();
        assert!(
            f.iter().any(|f| f == "1 block(s) lost (first: block 5)"),
            "{f:?}"
        );
        assert!(
            f.iter()
                .any(|f| f == "1 block(s) delivered more than once (first: block 9)"),
            "{f:?}"
        );
    }
}

#[test]
fn replay_and_file_workloads_verify() {
    let data: Vec<u8> = (0..100_000u32)
        .flat_map(|i| (i % 251).to_le_bytes())
        .collect();
    for (workload, replay) in [
        (Workload::uuids(2048, 2048), true),
        (Workload::file(data, 500, 5000), false),
    ] {
        let cfg = Config {
            workload,
            replay,
            ..short(PoolKind::ChanPool, Runtime::Tokio)
        };
        let out = stress::run(&cfg, &mut |_| {}).unwrap();
        assert!(out.passed(), "{:?}", out.failures());
        if replay {
            // One compression per producer, then re-sends.
            assert_eq!(out.compress.len(), 8);
        }
    }
}

#[test]
fn warm_up_is_excluded_from_histograms_and_totals() {
    let cfg = Config {
        warmup: Duration::from_millis(100),
        ..short(PoolKind::ThreadLocal, Runtime::Tokio)
    };
    let out = stress::run(&cfg, &mut |_| {}).unwrap();
    assert!(out.passed());
    assert!(out.totals.blocks < out.totals.verified);
    assert!(out.decompress.len() < out.totals.verified);
    assert!(out.measured < Duration::from_millis(250));
}

#[test]
fn the_measured_window_starts_when_the_warm_up_ends_not_at_a_sample() {
    // One sample, at the end: the sampler must still wake when the
    // warm-up ends, or the window would start (and end) at that sample and
    // measure nothing.
    let cfg = Config {
        warmup: Duration::from_millis(100),
        duration: Duration::from_millis(300),
        sample_every: Duration::from_secs(1),
        ..short(PoolKind::ThreadLocal, Runtime::Threads)
    };
    let out = stress::run(&cfg, &mut |_| {}).unwrap();
    assert!(out.passed(), "{:?}", out.failures());
    assert_eq!(out.samples.len(), 1);
    assert!(out.measured > Duration::ZERO);
    assert!(out.totals.blocks > 0, "{:?}", out.totals);
    assert!(!out.decompress.is_empty());
}

#[test]
fn bad_configurations_are_refused() {
    let mut c = short(PoolKind::Pool, Runtime::Tokio);
    c.producers = 0;
    assert!(matches!(
        stress::run(&c, &mut |_| {}),
        Err(stress::Error::Config(_))
    ));
    let mut c = short(PoolKind::Pool, Runtime::Tokio);
    c.workload = Workload::uuids(10, 5);
    assert!(matches!(
        stress::run(&c, &mut |_| {}),
        Err(stress::Error::Config(_))
    ));
}

#[test]
fn rounds_of_one_strategy_add_up() {
    let cfg = Config {
        duration: Duration::from_millis(150),
        ..short(PoolKind::Pool, Runtime::Tokio)
    };
    let first = stress::run(&cfg, &mut |_| {}).unwrap();
    let second = stress::run(&cfg, &mut |_| {}).unwrap();
    let mut both = first.clone();
    both.absorb(second.clone());
    let t = both.totals;
    assert_eq!(t.produced, first.totals.produced + second.totals.produced);
    assert_eq!(t.verified, t.produced);
    assert_eq!(t.bytes, first.totals.bytes + second.totals.bytes);
    assert_eq!(both.measured, first.measured + second.measured);
    assert_eq!(
        both.decompress.len(),
        first.decompress.len() + second.decompress.len()
    );
    assert_eq!(
        both.samples.len(),
        first.samples.len() + second.samples.len()
    );
    assert!(both.samples.windows(2).all(|w| w[0].at < w[1].at));
    assert!(both.passed());
}

#[test]
fn a_soak_fails_on_a_context_leak_and_passes_without_one() {
    // chanpool holds a fixed set of contexts, so contexts alive are flat
    // unless the fault leaks one per block. RSS gets a limit nothing
    // reaches: the other tests of this process allocate meanwhile.
    let limits = SoakLimits {
        rss_mib_per_min: 1e9,
        contexts_per_min: 1.0,
    };
    for leak in [false, true] {
        let cfg = Config {
            producers: 2,
            consumers: 2,
            interval: Duration::from_millis(20),
            duration: Duration::from_secs(1),
            warmup: Duration::from_millis(200),
            soak: Some(limits),
            faults: leak
                .then_some(Fault {
                    kind: FaultKind::LeakContext,
                    block: 0,
                })
                .into_iter()
                .collect(),
            ..short(PoolKind::ChanPool, Runtime::Tokio)
        };
        let out = stress::run(&cfg, &mut |_| {}).unwrap();
        let g = out.growth.expect("a 1 s run has samples to fit");
        assert!(g.samples >= MIN_SOAK_SAMPLES, "{g:?}");
        let c = out.contexts_end;
        if leak {
            // One context per block, ~100 blocks a second: thousands a
            // minute, against a limit of one.
            assert!(g.contexts_per_min > 100.0, "{g:?}");
            // The leak makes decompression contexts only.
            assert!(
                c.decompressors_created > c.compressors_created + 10,
                "{c:?}"
            );
            assert!(!out.passed());
            let f = out.failures();
            assert!(
                f.iter().any(|f| f.starts_with("growth after warm-up")),
                "{f:?}"
            );
        } else {
            assert_eq!(g.contexts_per_min, 0.0, "{g:?}");
            assert_eq!(c.decompressors_created, c.compressors_created);
            assert!(out.passed(), "{:?}", out.failures());
        }
    }
}

#[test]
fn a_soak_too_short_to_judge_is_refused() {
    // 250 ms sampled every 50 ms: 5 samples, not enough for a slope.
    let cfg = Config {
        soak: Some(SoakLimits::default()),
        ..short(PoolKind::Pool, Runtime::Tokio)
    };
    match stress::run(&cfg, &mut |_| {}) {
        Err(stress::Error::Config(m)) => {
            assert!(m.contains("soak too short to judge growth"), "{m}")
        }
        other => panic!("{:?}", other.map(|o| o.failures())),
    }
    // Without --soak the same run only reports growth, and passes.
    let out = stress::run(&short(PoolKind::Pool, Runtime::Tokio), &mut |_| {}).unwrap();
    assert!(out.passed());
}

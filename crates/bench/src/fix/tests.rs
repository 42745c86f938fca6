use super::*;

/// Settings small enough for a unit test to measure every part quickly.
pub(super) fn tiny() -> Settings {
    Settings {
        iterations: 200,
        warmup: 10,
        runs: 2,
        batch: 10,
        transport_iterations: 40,
        pin: None,
        min_round: Duration::ZERO,
    }
}

#[test]
fn every_measurement_fills_its_histograms() {
    let s = tiny();
    let mut all = scan(&s);
    all.push(parse(&s, None).unwrap());
    all.push(build(&s));
    all.extend(store(&s));
    let d = deferred(&s).unwrap();
    // The spaced row (there when the TSC is usable) reports its own
    // refused submits and its own worker's placement.
    let spaced = d.variants.iter().any(|v| v.name.ends_with("ns apart"));
    let noted = |prefix: &str| d.notes.iter().any(|n| n.starts_with(prefix));
    assert!(noted("SPSC submits refused (ring full): "), "{:?}", d.notes);
    assert_eq!(
        noted("spaced-row SPSC submits refused (ring full): "),
        spaced,
        "{:?}",
        d.notes
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.starts_with("placement: ")
                && n.contains("; spaced-row SPSC workers ") == spaced),
        "{:?}",
        d.notes
    );
    // The producer and the consumers on two cores where two are usable,
    // whether or not --pin was given; on one core, the note says they share.
    let placement = match fixcore::affinity::pair(None) {
        Some((p, w)) => format!(
            "placement: producer (measuring thread) pinned to core {p}; SPSC worker pinned to \
             core {w}"
        ),
        None => "both sides on the process's one core".to_owned(),
    };
    assert!(
        d.notes.iter().any(|n| n.starts_with(&placement)),
        "{placement:?} in {:?}",
        d.notes
    );
    all.push(d);
    all.push(affinity(&s).unwrap());
    for c in &all {
        for v in &c.variants {
            assert_eq!(v.histogram.len(), 200, "{} / {}", c.title, v.name);
        }
    }
    let t = transport(&s).unwrap();
    // Without --pin the two ends still get a core each where two are
    // usable (both on the one core otherwise), and each row's note says how
    // its transport was set up and where its ends ran.
    let placed = match fixcore::affinity::pair(None) {
        Some((c, v)) => format!("; client pinned to core {c}, server pinned to core {v}"),
        None => {
            let here = fixcore::affinity::Pinning::current();
            format!("; client {here}, server {here}")
        }
    };
    // At least TRANSPORT_ROUNDS rounds (the 2 of `tiny` are raised), each
    // with its share of the round trips and its median kept.
    let rounds = TRANSPORT_ROUNDS;
    for v in &t.variants {
        let each = 40usize.div_ceil(rounds);
        assert_eq!(v.histogram.len(), (each * rounds) as u64, "{}", v.name);
        assert_eq!(v.rounds.len(), rounds, "{}", v.name);
        let note = v.note.as_deref().unwrap_or_default();
        let setup = match v.name.as_str() {
            "blocking" => "blocking std::net",
            "tokio" => "tokio current-thread",
            _ => "io_uring ",
        };
        assert!(
            note.starts_with(setup) && note.ends_with(&placed),
            "{}: {note:?}",
            v.name
        );
    }
    assert_eq!(t.also_vs, Some(1), "tokio");
    // Without io_uring the benchmark still runs, minus those rows.
    match transport::io_uring_available() {
        Ok(()) => {
            assert_eq!(t.variants.len(), 4);
        }
        Err(_) => {
            assert_eq!(t.variants.len(), 2);
            assert!(
                t.notes
                    .iter()
                    .any(|n| n.starts_with("io_uring unavailable: ")),
                "{:?}",
                t.notes
            );
        }
    }
}

#[test]
fn parse_of_input_rejects_bad_messages() {
    let s = tiny();
    assert!(parse(&s, Some(&[b"8=FIX.4.4\x01".to_vec()])).is_err());
    assert!(parse(&s, Some(&[])).is_err());
    let good = sample::all().swap_remove(1).1;
    let c = parse(&s, Some(&[good])).unwrap();
    assert_eq!(c.variants.len(), 1);
}

#[test]
fn parse_with_runs_the_hook_after_each_run_on_the_rows_of_parse_sets() {
    let s = tiny();
    let sets = parse_sets(None).unwrap();
    assert_eq!(sets.names().len(), sample::all().len());
    assert_eq!(sets.messages().len(), sets.names().len());
    let mut seen = Vec::new();
    let c = parse_with(&s, &sets, |run| {
        seen.push(run);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(seen, [0, 1]);
    let names: Vec<&str> = c.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, sets.names());
    for v in &c.variants {
        assert_eq!(v.histogram.len(), 200, "{}", v.name);
    }
    // The hook's first error ends the measurement with that error.
    let mut calls = 0;
    let e = parse_with(&s, &sets, |run| {
        calls += 1;
        if run == 0 { Err("stop") } else { Ok(()) }
    })
    .unwrap_err();
    assert_eq!((e, calls), ("stop", 1));
    // The input's row holds the input, once validated.
    let good = sample::all().swap_remove(1).1;
    let input = parse_sets(Some(&[good.clone(), good.clone()])).unwrap();
    assert_eq!(input.messages(), [vec![good.clone(), good]]);
    assert!(input.names()[0].starts_with("input: 2 messages"));
}

/// The batched rows keep a tenth of a nanosecond: a 4.34 ns operation is
/// 4.3 ns, not 4 (whole nanoseconds moved such a row by 12 % when its mean
/// crossed a half), and the report's latency columns get nanoseconds back.
#[test]
fn batched_rows_are_recorded_in_tenths_of_a_nanosecond() {
    let s = tiny();
    let op: Op<'_> = Box::new(|n| Duration::from_nanos(434 * n as u64 / 100));
    let c = interleave(&s, "t".into(), vec![("x".into(), op)]);
    let h = &c.variants[0].histogram;
    assert_eq!(h.len(), 200);
    assert_eq!(h.value_at_quantile(0.5), 43);
    assert!((median_ns(h) - 4.3).abs() < 1e-9, "{}", median_ns(h));
    let ns = in_ns(h);
    assert_eq!((ns.len(), ns.value_at_quantile(0.5)), (200, 4));
    // Every batched part goes through the same runner.
    for c in scan(&s) {
        let v = &c.variants[0];
        let ns = in_ns(&v.histogram);
        assert!(
            v.histogram.value_at_quantile(0.5) >= 9 * ns.value_at_quantile(0.5),
            "{}: {} tenths against {} ns",
            c.title,
            v.histogram.value_at_quantile(0.5),
            ns.value_at_quantile(0.5)
        );
    }
}

/// The report's timing line says how long a paced round was, and says
/// nothing of it when rounds are not paced.
#[test]
fn the_timing_line_names_the_round_length_when_rounds_are_paced() {
    let paced = Settings {
        min_round: Duration::from_millis(20),
        ..tiny()
    };
    assert!(
        paced.timing().contains("share of a round at least 20 ms"),
        "{}",
        paced.timing()
    );
    assert!(
        !tiny().timing().contains("share of a round"),
        "{}",
        tiny().timing()
    );
}

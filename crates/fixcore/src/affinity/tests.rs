use super::*;

#[test]
fn pin_to_each_reported_core_and_reject_others() {
    let cs = cores();
    assert!(!cs.is_empty());
    let t = std::thread::spawn(move || {
        for &c in &cs {
            assert_eq!(pin_current(c).unwrap(), c);
            assert_eq!(Pinning::current().core, Some(c));
        }
        assert!(pin_current(100_000).is_err());
    });
    t.join().unwrap();
    assert_eq!(Pinning { core: Some(1) }.to_string(), "pinned to core 1");
    assert!(online() >= cores().len());
}

/// A thread spawned by a pinned thread inherits the pin; unpinning gives
/// it the original mask back, and `Pinning::current` tells the truth
/// either way.
#[test]
fn children_of_a_pinned_thread_can_be_unpinned() {
    let all = usable();
    let first = all[0];
    std::thread::spawn(move || {
        pin_current(first).unwrap();
        std::thread::spawn(move || {
            assert_eq!(Pinning::current().core, Some(first), "inherited");
            unpin_current().unwrap();
            assert_eq!(cores(), usable());
            let want = if usable().len() == 1 {
                Some(first)
            } else {
                None
            };
            assert_eq!(Pinning::current().core, want);
        })
        .join()
        .unwrap();
    })
    .join()
    .unwrap();
    if all.len() > 1 {
        let other = other_core(first).unwrap();
        assert_ne!(other, first);
        assert!(all.contains(&other));
    } else {
        assert_eq!(other_core(first), None);
    }
}

/// The calling thread's mask as the kernel reports it in
/// `/proc/thread-self/status` (`Cpus_allowed_list: 0-3,6`), read
/// independently of `sched_getaffinity` and of this module.
#[cfg(target_os = "linux")]
fn kernel_mask() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    let mut ids = Vec::new();
    for part in list.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        ids.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    ids
}

/// `place_current`: a pin that the OS refuses (a core that does not
/// exist) or that is beyond `CPU_SETSIZE` fails and leaves the thread's
/// mask as it was, pinned or not; `None` unpins a pinned thread; a
/// valid core pins. The mask is checked against the kernel's own report.
#[cfg(target_os = "linux")]
#[test]
fn place_current_pins_unpins_and_leaves_the_mask_on_refusal() {
    let first = usable()[0];
    let beyond = libc::CPU_SETSIZE as usize + 1;
    // Inside CPU_SETSIZE, but no machine this runs on has it online.
    let missing = libc::CPU_SETSIZE as usize - 1;
    assert!(missing >= online());
    std::thread::spawn(move || {
        remember_original();
        let original = kernel_mask();
        for bad in [missing, beyond, 9999] {
            assert!(matches!(
                place_current(Some(bad)),
                Err(PinError::Refused { core, .. }) if core == bad
            ));
            assert_eq!(kernel_mask(), original, "unpinned thread, core {bad}");
        }
        let placed = place_current(Some(first)).unwrap();
        assert_eq!(placed, Pinning { core: Some(first) });
        assert_eq!(kernel_mask(), vec![first]);
        for bad in [missing, beyond] {
            assert!(place_current(Some(bad)).is_err());
            assert_eq!(kernel_mask(), vec![first], "pinned thread, core {bad}");
        }
        let placed = place_current(None).unwrap();
        assert_eq!(kernel_mask(), original);
        let want = (original.len() == 1).then_some(first);
        assert_eq!(placed, Pinning { core: want });
    })
    .join()
    .unwrap();
}

/// `with_placement`: a child process started from a pinned thread inside
/// `with_placement(None, ..)` runs on the process's original mask (read
/// from the child's own `/proc/PID/status`), one started inside
/// `with_placement(Some(core), ..)` on that core, and the thread is pinned
/// as before afterwards; `pair` gives two different cores when two are
/// usable.
#[cfg(target_os = "linux")]
#[test]
fn children_start_with_the_mask_asked_for_and_the_thread_keeps_its_own() {
    let all = usable();
    let first = all[0];
    let last = *all.last().unwrap();
    let child_mask = |core: Option<usize>| {
        let child = with_placement(core, || {
            std::process::Command::new("sleep")
                .arg("5")
                .spawn()
                .unwrap()
        })
        .unwrap();
        let mut child = child;
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_owned()
    };
    std::thread::spawn(move || {
        remember_original();
        let original = kernel_mask();
        pin_current(first).unwrap();
        let unpinned = child_mask(None);
        let mut ids = Vec::new();
        for part in unpinned.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            ids.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
        }
        assert_eq!(ids, original, "the child of a pinned thread");
        assert_eq!(kernel_mask(), vec![first], "the thread keeps its pin");
        assert_eq!(child_mask(Some(last)), last.to_string());
        assert_eq!(kernel_mask(), vec![first]);
    })
    .join()
    .unwrap();
    match pair(None) {
        Some((a, b)) => {
            assert!(all.len() > 1 && a != b && all.contains(&a) && all.contains(&b));
            assert!(pair_note(Some((a, b))).contains(&format!("cores {a} and {b}")));
        }
        None => {
            assert_eq!(all.len(), 1);
            assert!(pair_note(None).starts_with("both sides on the process's one core"));
        }
    }
}

/// Core lists read as Linux writes them and written back the same
/// way; each kind of bad text is its own error.
#[test]
fn core_sets_read_and_write_linux_lists() {
    for (text, ids, shown) in [
        ("2", vec![2], "2"),
        ("3,2,2", vec![2, 3], "2-3"),
        ("0-3,6", vec![0, 1, 2, 3, 6], "0-3,6"),
        (" 1 , 5-6 ,9", vec![1, 5, 6, 9], "1,5-6,9"),
        ("1023", vec![1023], "1023"),
    ] {
        let set: CoreSet = text.parse().unwrap();
        assert_eq!(set.cores(), ids, "{text}");
        assert_eq!(set.to_string(), shown, "{text}");
        assert_eq!(shown.parse::<CoreSet>().unwrap(), set);
    }
    for (text, err) in [
        ("", CoreSetError::Syntax),
        ("1,", CoreSetError::Syntax),
        ("a", CoreSetError::Syntax),
        ("-1", CoreSetError::Syntax),
        ("1-", CoreSetError::Syntax),
        ("+1", CoreSetError::Syntax),
        ("1-2-3", CoreSetError::Syntax),
        ("3-1", CoreSetError::Backwards),
        ("1024", CoreSetError::TooLarge),
        ("0-99999999999999999999999", CoreSetError::TooLarge),
    ] {
        assert_eq!(text.parse::<CoreSet>(), Err(err), "{text:?}");
        assert_eq!(err.to_string(), err.reason());
    }
    assert_eq!(CoreSet::new([]), Err(CoreSetError::Syntax));
    assert_eq!(CoreSet::new([4, 1024]), Err(CoreSetError::TooLarge));
}

/// `CoreSet::place_current` confines the thread to exactly its cores
/// (the kernel's report), refuses a core outside the process's mask
/// naming it and leaving the mask as it was, and `run_placed` gives the
/// thread its mask back while a thread spawned inside keeps the set.
#[cfg(target_os = "linux")]
#[test]
fn core_sets_place_threads_and_refuse_cores_the_process_may_not_use() {
    let all = usable();
    let missing = online().max(all.last().copied().unwrap_or(0) + 1);
    std::thread::spawn(move || {
        remember_original();
        let original = kernel_mask();
        let bad = CoreSet::new([all[0], missing]).unwrap();
        let err = bad.place_current().unwrap_err();
        assert!(matches!(&err, PinError::NotAllowed { core, .. } if *core == missing));
        assert_eq!(
            err.to_string(),
            format!(
                "core {missing} is not one this process may run on (it may use {})",
                CoreSet::new(all.clone()).unwrap()
            )
        );
        assert_eq!(kernel_mask(), original);
        let last = CoreSet::new([*all.last().unwrap()]).unwrap();
        let child = last
            .run_placed(|| {
                assert_eq!(kernel_mask(), last.cores());
                std::thread::spawn(|| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    kernel_mask()
                })
            })
            .unwrap();
        assert_eq!(kernel_mask(), original, "the thread's mask is back");
        assert_eq!(
            child.join().unwrap(),
            last.cores(),
            "the child keeps the set"
        );
        let every = CoreSet::new(all.clone()).unwrap();
        every.place_current().unwrap();
        assert_eq!(kernel_mask(), all);
    })
    .join()
    .unwrap();
}

/// `place_current_or_unpin`: a refused pin is returned and the thread,
/// even one pinned before, ends on the original mask; `None` unpins; a
/// valid core pins with no error.
#[cfg(target_os = "linux")]
#[test]
fn place_current_or_unpin_falls_back_to_the_original_mask() {
    let first = usable()[0];
    let missing = libc::CPU_SETSIZE as usize - 1;
    std::thread::spawn(move || {
        remember_original();
        let original = kernel_mask();
        let unpinned = Pinning {
            core: (original.len() == 1).then_some(first),
        };
        let (placed, refused) = place_current_or_unpin(Some(first));
        assert_eq!(
            (placed, refused.is_none()),
            (Pinning { core: Some(first) }, true)
        );
        assert_eq!(kernel_mask(), vec![first]);
        for bad in [missing, libc::CPU_SETSIZE as usize + 1] {
            pin_current(first).unwrap();
            let (placed, refused) = place_current_or_unpin(Some(bad));
            assert!(matches!(refused, Some(PinError::Refused { core, .. }) if core == bad));
            assert_eq!(kernel_mask(), original, "core {bad}");
            assert_eq!(placed, unpinned);
        }
        pin_current(first).unwrap();
        let (placed, refused) = place_current_or_unpin(None);
        assert!(refused.is_none());
        assert_eq!(kernel_mask(), original);
        assert_eq!(placed, unpinned);
    })
    .join()
    .unwrap();
}

//! Issue 13.6: no flag value makes perfkit panic or abort. Sizes and
//! counts that went straight into an allocation, a thread count or an
//! overflowing sum are now refused by their parser (exit 2, naming the
//! flag and the range) or streamed.
//!
//! Each case runs under a 4 GiB address-space limit, so an allocation that
//! would have aborted only on a smaller machine aborts here too.

mod interop;

use interop::output_within;
use std::process::Command;

const MAX: &str = "18446744073709551615";
const U32_MAX: &str = "4294967295";

fn limited(args: &[&str]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 4194304; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_perfkit"))
        .args(args);
    cmd
}

#[test]
fn huge_and_zero_sizes_are_usage_errors_not_crashes() {
    // (arguments, the flag the error must name)
    let cases: &[(&[&str], &str)] = &[
        (
            &["betree", "gen-exprs", "--params", U32_MAX, "--count", "1"],
            "--params",
        ),
        (
            &["betree", "gen-events", "--params", MAX, "--count", "1"],
            "--params",
        ),
        (
            &["stress", "--max-size", MAX, "--duration", "1s"],
            "--max-size",
        ),
        (
            &["stress", "--min-size", "2G", "--duration", "1s"],
            "--min-size",
        ),
        (
            &["stress", "--producers", MAX, "--duration", "1s"],
            "--producers",
        ),
        (
            &["stress", "--consumers", "0", "--duration", "1s"],
            "--consumers",
        ),
        (
            &["stress", "--channel", "0", "--duration", "1s"],
            "--channel",
        ),
        (
            &["stress", "--channel", MAX, "--duration", "1s"],
            "--channel",
        ),
        (
            &["stress", "--workers", U32_MAX, "--duration", "1s"],
            "--workers",
        ),
        (
            &["stress", "--chanpool-size", MAX, "--duration", "1s"],
            "--chanpool-size",
        ),
        (
            &["stress", "--interval", "18446744073709551615s"],
            "--interval",
        ),
        (&["stress", "--duration", "99999999999h"], "--duration"),
        (&["fix-bench", "--batch", U32_MAX, "--runs", "1"], "--batch"),
        (
            &["fix-bench", "--transport-iterations", MAX],
            "--transport-iterations",
        ),
        (&["fix-bench", "--iterations", MAX], "--iterations"),
        (&["fix-bench", "--session-orders", MAX], "--session-orders"),
        (
            &["fix-bench", "--session-window", U32_MAX],
            "--session-window",
        ),
        (
            &["fix", "acceptor", "no-such.cfg", "--spin", "11ms"],
            "--spin",
        ),
        (
            &["fix", "initiator", "no-such.cfg", "--spin", "1h"],
            "--spin",
        ),
        (&["fix", "acceptor", "no-such.cfg", "--pin", "3-1"], "--pin"),
        (&["fix", "initiator", "no-such.cfg", "--pin", "x"], "--pin"),
        (&["fix", "acceptor", "no-such.cfg", "--pin", MAX], "--pin"),
        (&["zip", "a.zip", "a", "--level", U32_MAX], "--level"),
        (
            &[
                "bench",
                "--only",
                "zstd",
                "--zstd-time",
                "18446744073709551615s",
            ],
            "--zstd-time",
        ),
        (
            &[
                "betree",
                "bench",
                "--exprs",
                "e",
                "--events",
                "v",
                "--replay-over",
                "18446744073709551615s",
            ],
            "--replay-over",
        ),
    ];
    for (args, flag) in cases {
        let out = output_within(&mut limited(args), 60);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?} names {flag}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn more_threads_than_the_threads_runtime_starts_is_an_error() {
    let out = output_within(
        &mut limited(&[
            "stress",
            "--runtime",
            "threads",
            "--producers",
            "100000",
            "--duration",
            "1s",
        ]),
        60,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "perfkit: --producers 100000 is more than 4096, the most threads --runtime threads starts\n"
    );
}

/// Issue 63: a size that is a number, only too large, says so and names
/// the limit, on every size flag of compress and decompress; it used to
/// be "is not a size" (`-B99999999999`) when it overflowed.
#[test]
fn sizes_too_large_name_their_limit() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["compress", "-B99999999999", "-c", "f"],
            "99999999999 is larger than the largest job size, 1G (1073741824 bytes)",
        ),
        (
            &["compress", "-B2000M", "-c", "f"],
            "2000M is larger than the largest job size, 1G (1073741824 bytes)",
        ),
        (
            &["compress", "--memory", "99999999999999999999999", "-c", "f"],
            "99999999999999999999999 is larger than the largest window zstd can decode, 2G (2147483648 bytes)",
        ),
        (
            &["decompress", "-M", "3G", "-c", "f"],
            "3G is larger than the largest window zstd can decode, 2G (2147483648 bytes)",
        ),
        (
            &["decompress", "-M", "1", "-c", "f"],
            "1 is below the smallest window zstd decodes, 1K (1024 bytes)",
        ),
        (
            &[
                "compress",
                "--train",
                "--maxdict",
                "99999999999999999999",
                "f",
            ],
            "99999999999999999999 is larger than the largest dictionary zstd can train, 4294967295 bytes",
        ),
        (
            &[
                "compress",
                "--seekable",
                "--frame-size",
                "17179869184G",
                "-c",
                "f",
            ],
            "17179869184G is larger than the largest seekable frame, 1G (1073741824 bytes)",
        ),
        (
            &[
                "decompress",
                "--range",
                "0..99999999999999999999",
                "-c",
                "f",
            ],
            "99999999999999999999 is larger than the largest size, 18446744073709551615 bytes",
        ),
        (
            &["compress", "--long=99999999999", "-c", "f"],
            "99999999999 is not in 10..=31",
        ),
        (
            &["compress", "-T", "99999999999", "-c", "f"],
            "99999999999 is not in 0..=4294967295",
        ),
    ];
    for (args, says) in cases {
        let out = output_within(&mut limited(args), 60);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("is not a size"), "{args:?}: {err}");
    }
}

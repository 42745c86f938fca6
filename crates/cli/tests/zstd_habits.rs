//! zstd's habits beyond its flags: the lines it prints at its default
//! verbosity, its refusal to read a terminal, `-r`, `--exclude-compressed`,
//! `--format=gzip`. The reference `zstd` (and `gzip`) run beside perfkit on
//! the same inputs, and their outputs, exit codes and what they leave on
//! disk are compared.

mod interop;

use interop::{have, listing, perfkit};
use std::path::Path;
use std::process::{Command, Output};

fn run(cmd: &mut Command, dir: &Path) -> Output {
    cmd.current_dir(dir).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Random bytes: stored as raw blocks by either library, so both tools'
/// frames have the same size and their lines must match byte for byte.
fn random(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn the_ratio_lines_are_zstds() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, bytes) in [
        ("empty", Vec::new()),
        ("five", b"hello".to_vec()),
        ("random", random(300_000, 7)),
        ("kib", random(1024, 9)),
    ] {
        std::fs::write(d.join(name), &bytes).unwrap();
        for (args, what) in [
            (vec!["-3", "-f", name], "compress"),
            (
                vec!["-d", "-f", "-o", "back", &format!("{name}.zst")],
                "decompress",
            ),
            (vec!["-t", &format!("{name}.zst")], "test"),
        ] {
            let theirs = run(Command::new("zstd").args(&args), d);
            let ours = run(perfkit().arg("compress").args(&args), d);
            assert_eq!(ours.status.code(), theirs.status.code(), "{what} {name}");
            assert_eq!(stderr(&ours), stderr(&theirs), "{what} {name}");
        }
    }
    // Several inputs: the totals alone; -q: nothing; stdout: nothing.
    for args in [
        vec!["-3", "-f", "five", "random"],
        vec!["-d", "-f", "five.zst", "random.zst"],
        vec!["-q", "-3", "-f", "five"],
        vec!["-3", "-c", "random"],
        vec!["-d", "-c", "random.zst"],
    ] {
        let theirs = run(Command::new("zstd").args(&args), d);
        let ours = run(perfkit().arg("compress").args(&args), d);
        assert_eq!(stderr(&ours), stderr(&theirs), "{args:?}");
        assert_eq!(ours.stdout, theirs.stdout, "{args:?}");
    }
    // A compressible input: the same line but for the size each library's
    // frame came to.
    std::fs::write(d.join("text"), "perfkit and zstd\n".repeat(4000)).unwrap();
    let shape = |o: &Output| {
        let line = stderr(o);
        let (head, tail) = line.split_once('(').unwrap();
        let (input, _) = tail.split_once("=>").unwrap();
        (
            head[..22].to_string(),
            input.to_string(),
            line.ends_with(", text.zst) \n"),
        )
    };
    let theirs = run(Command::new("zstd").args(["-3", "-f", "text"]), d);
    let ours = run(perfkit().args(["compress", "-3", "-f", "text"]), d);
    assert_eq!(shape(&ours), shape(&theirs));
    // Nothing else was left behind: no temporary, no stray output.
    assert_eq!(
        listing(d),
        [
            "back",
            "empty",
            "empty.zst",
            "five",
            "five.zst",
            "kib",
            "kib.zst",
            "random",
            "random.zst",
            "text",
            "text.zst"
        ]
    );
}

/// `script` runs `command` on a pseudo-terminal (its stdin a terminal);
/// the transcript and the command's own exit status.
fn on_a_terminal(command: &str, dir: &Path) -> (String, Option<i32>) {
    let out = Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).replace('\r', ""),
        out.status.code(),
    )
}

#[test]
fn a_terminal_on_stdin_is_refused_as_zstd_refuses_it() {
    if !have("zstd", "zstd") || !have("script", "bsdutils") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pk = env!("CARGO_BIN_EXE_perfkit");
    for args in ["", "-d", "-c", "-"] {
        let (theirs, their_code) = on_a_terminal(&format!("zstd {args}"), dir.path());
        let (ours, our_code) = on_a_terminal(&format!("{pk} compress {args}"), dir.path());
        assert_eq!(theirs, "stdin is a console, aborting\n", "{args}");
        assert_eq!(ours, "perfkit: stdin is a console, aborting\n", "{args}");
        assert_eq!(our_code, their_code, "{args}");
    }
    assert!(listing(dir.path()).is_empty());
}

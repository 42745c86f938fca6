use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use perfkit_testkit::interop;

use crate::pipeline::tests::Shared;

use super::*;

/// Everything a run says and asks, kept for the test to read.
#[derive(Default)]
struct Recorder {
    /// zstd's lines and the tool's notes (`note: ` before a note).
    lines: Vec<String>,
    /// The failures, as `input: error`.
    failures: Vec<String>,
    /// The answer to the overwrite prompt.
    yes: bool,
    /// Whether a failure stops the run.
    stop: bool,
    /// What went to stdout.
    stdout: Arc<Mutex<Vec<u8>>>,
}

impl Console for Recorder {
    fn say(&mut self, line: &str) {
        self.lines.push(line.to_owned());
    }
    fn note(&mut self, text: &str, cause: Option<&io::Error>) {
        let cause = cause.map(|e| format!(": {e}")).unwrap_or_default();
        self.lines.push(format!("note: {text}{cause}"));
    }
    fn may_overwrite(&mut self, path: &Path, _: bool) -> Result<(), Declined> {
        if self.yes {
            Ok(())
        } else {
            Err(Declined(format!("{} kept", path.display())))
        }
    }
    fn progress(&mut self, _: &Path, _: Option<u64>) -> Box<dyn FnMut(Option<u64>)> {
        Box::new(|_| {})
    }
    fn stdout(&mut self) -> Box<dyn Write + Send> {
        Box::new(Shared(self.stdout.clone()))
    }
    fn failed(&mut self, input: &Path, error: InputError) -> bool {
        self.failures.push(format!("{}: {error}", input.display()));
        !self.stop
    }
}

const TEXT: &[u8] = b"a line of text, and another one\n";

/// Two inputs in a fresh folder.
fn two_inputs() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = ["a", "b"].iter().map(|n| dir.path().join(n)).collect();
    for (i, f) in files.iter().enumerate() {
        std::fs::write(f, TEXT.repeat(100 * (i + 1))).unwrap();
    }
    (dir, files)
}

fn run(options: &Options, console: &mut Recorder) -> Finished {
    Run::new(options, &options.files, None, None, None)
        .code(console)
        .unwrap()
}

/// `path` decoded by the zstd CLI, the oracle.
fn zstd_decoded(path: &Path) -> Vec<u8> {
    let out = interop::ok(Command::new("zstd").args(["-dc", "--"]).arg(path));
    out.stdout
}

#[test]
fn every_input_is_compressed_into_its_own_file_and_the_totals_said() {
    if !interop::have("zstd", "--version", "apt-get install zstd") {
        return;
    }
    let (_dir, files) = two_inputs();
    let options = Options::new(files.clone(), Mode::Compress);
    let mut console = Recorder::default();
    assert_eq!(
        run(&options, &mut console),
        Finished::Done { failed: false }
    );
    for (i, f) in files.iter().enumerate() {
        let zst = PathBuf::from(format!("{}.zst", f.display()));
        assert_eq!(zstd_decoded(&zst), TEXT.repeat(100 * (i + 1)));
        assert!(f.exists(), "no --rm: the input stays");
    }
    // Two inputs: only the totals, as zstd says them.
    assert_eq!(console.lines.len(), 1, "{:?}", console.lines);
    assert!(console.lines[0].starts_with("  2 files compressed :"));
}

#[test]
fn a_failed_input_is_reported_and_the_rest_still_run() {
    let (dir, mut files) = two_inputs();
    files.insert(0, dir.path().join("missing"));
    files.push(dir.path().join("plain"));
    std::fs::write(&files[3], b"no suffix").unwrap();
    let mut options = Options::new(files.clone(), Mode::Compress);
    options.verbose = true;
    let mut console = Recorder::default();
    assert_eq!(run(&options, &mut console), Finished::Done { failed: true });
    assert_eq!(console.failures.len(), 1, "{:?}", console.failures);
    assert!(console.failures[0].contains("missing: opening input"));
    assert!(dir.path().join("b.zst").exists() && dir.path().join("plain.zst").exists());
    // With -v each input's lines are said too.
    assert!(console.lines.iter().any(|l| l.contains("a: 3200 → ")));

    // Decoding: a name without a known suffix has no output.
    let mut options = Options::new(vec![files[3].clone()], Mode::Decompress);
    options.quiet = true;
    let mut console = Recorder::default();
    assert_eq!(run(&options, &mut console), Finished::Done { failed: true });
    assert!(
        console.failures[0].ends_with(": unknown suffix (expected .zst or .gz); use -o FILE or -c"),
        "{:?}",
        console.failures
    );
}

#[test]
fn an_existing_output_is_replaced_only_with_a_yes() {
    let (dir, files) = two_inputs();
    let out = dir.path().join("a.zst");
    std::fs::write(&out, b"mine").unwrap();
    let options = Options::new(vec![files[0].clone()], Mode::Compress);
    let mut console = Recorder::default();
    assert_eq!(run(&options, &mut console), Finished::Done { failed: true });
    assert_eq!(std::fs::read(&out).unwrap(), b"mine");
    assert_eq!(console.lines, [format!("{} kept", out.display())]);
    assert!(console.failures.is_empty(), "a no is said, not a failure");

    let mut console = Recorder {
        yes: true,
        ..Recorder::default()
    };
    assert_eq!(
        run(&options, &mut console),
        Finished::Done { failed: false }
    );
    assert_eq!(
        crate::decompress(&std::fs::read(&out).unwrap()).unwrap(),
        TEXT.repeat(100)
    );
}

#[test]
fn rm_removes_an_input_only_once_a_regular_file_holds_its_output() {
    let (dir, files) = two_inputs();
    let mut options = Options::new(files.clone(), Mode::Compress);
    options.remove_input = true;
    options.quiet = true;
    let mut console = Recorder::default();
    assert_eq!(
        run(&options, &mut console),
        Finished::Done { failed: false }
    );
    assert!(!files[0].exists() && !files[1].exists());
    assert!(dir.path().join("a.zst").exists() && dir.path().join("b.zst").exists());

    // To stdout, the input stays, and says why.
    let input = dir.path().join("a.zst");
    let mut options = Options::new(vec![input.clone()], Mode::Decompress);
    options.remove_input = true;
    options.stdout = true;
    let mut console = Recorder::default();
    assert_eq!(
        run(&options, &mut console),
        Finished::Done { failed: false }
    );
    assert!(input.exists());
    assert_eq!(*console.stdout.lock().unwrap(), TEXT.repeat(100));
    assert!(
        console.lines.is_empty(),
        "stdout's input says nothing: {:?}",
        console.lines
    );
}

#[test]
fn a_joined_output_is_kept_only_when_every_input_went_in_and_a_stop_stops() {
    let (dir, mut files) = two_inputs();
    let joined = dir.path().join("all.zst");
    let mut options = Options::new(files.clone(), Mode::Compress);
    options.output = Some(joined.clone());
    let code = |options: &Options, console: &mut Recorder| {
        let out = landing::Output::create(&joined, true).unwrap();
        Run::new(options, &options.files, None, None, Some(out))
            .code(console)
            .unwrap()
    };
    let mut console = Recorder::default();
    assert_eq!(
        code(&options, &mut console),
        Finished::Done { failed: false }
    );
    let both = [TEXT.repeat(100), TEXT.repeat(200)].concat();
    assert_eq!(
        crate::decompress(&std::fs::read(&joined).unwrap()).unwrap(),
        both
    );

    std::fs::remove_file(&joined).unwrap();
    files.push(dir.path().join("missing"));
    options.files = files;
    let mut console = Recorder::default();
    assert_eq!(
        code(&options, &mut console),
        Finished::Done { failed: true }
    );
    assert!(
        !joined.exists(),
        "a joined file missing an input is not kept"
    );
    let note = format!("note: {}: not written: an input failed", joined.display());
    assert!(console.lines.contains(&note), "{:?}", console.lines);

    options.files.rotate_right(1);
    let mut console = Recorder {
        stop: true,
        ..Recorder::default()
    };
    assert_eq!(code(&options, &mut console), Finished::Stopped);
    assert!(!joined.exists() && console.lines.is_empty());
}

#[test]
fn each_input_goes_where_the_options_say() {
    let mut o = Options::new(vec![], Mode::Compress);
    let f = Path::new("d/f.txt");
    assert_eq!(o.sink_for(f, false), Ok(Sink::File("d/f.txt.zst".into())));
    assert_eq!(o.sink_for(Path::new("-"), false), Ok(Sink::Stdout));
    o.format = Format::Gzip(6);
    assert_eq!(o.sink_for(f, false), Ok(Sink::File("d/f.txt.gz".into())));
    o.output_dir = Some(OutputDir::Mirror("out".into()));
    assert_eq!(
        o.sink_for(f, false),
        Ok(Sink::File("out/d/f.txt.gz".into()))
    );
    assert_eq!(
        o.sink_for(Path::new("../f"), false)
            .unwrap_err()
            .to_string(),
        "--output-dir-mirror cannot place it into 'out' (its path goes up, ..)"
    );
    o.output = Some("all".into());
    assert_eq!(o.sink_for(f, true), Ok(Sink::Joined("all".into())));
    assert_eq!(o.sink_for(f, false), Ok(Sink::File("all".into())));
    o.output = Some("-".into());
    assert_eq!(o.sink_for(f, false), Ok(Sink::Stdout));
    o.mode = Mode::Test;
    assert_eq!(o.sink_for(f, false), Ok(Sink::Discard));

    // Pass-through: as asked, else with -f to stdout only.
    let mut o = Options::new(vec![], Mode::Decompress);
    assert!(!o.passes_through(&Sink::Stdout));
    o.force = true;
    assert!(o.passes_through(&Sink::Stdout) && !o.passes_through(&Sink::Discard));
    o.pass_through = Some(false);
    assert!(!o.passes_through(&Sink::Stdout));
}

#[test]
fn a_console_is_refused_as_zstd_refuses_it() {
    let stdin = vec![PathBuf::from("-")];
    let mut o = Options::new(stdin.clone(), Mode::Compress);
    let refused =
        |o: &Options, files: &[PathBuf], tty_in, tty_out| o.console_refusal(files, tty_in, tty_out);
    assert_eq!(
        refused(&o, &stdin, true, false),
        Some("stdin is a console, aborting")
    );
    assert_eq!(
        refused(&o, &stdin, false, true),
        Some("stdout is a console, aborting")
    );
    assert_eq!(refused(&o, &stdin, false, false), None);
    // A named input, -c, -f, an output file or decoding: stdout is asked
    // for, or is no console's business.
    assert_eq!(refused(&o, &[PathBuf::from("f")], false, true), None);
    o.stdout = true;
    assert_eq!(refused(&o, &stdin, false, true), None);
    o.stdout = false;
    o.force = true;
    assert_eq!(refused(&o, &stdin, false, true), None);
    o.force = false;
    o.output = Some("out.zst".into());
    assert_eq!(refused(&o, &stdin, false, true), None);
    o.output = Some("-".into());
    assert!(refused(&o, &stdin, false, true).is_some());
    o.mode = Mode::Decompress;
    assert_eq!(refused(&o, &stdin, false, true), None);
}

#[test]
fn a_patch_is_planned_for_the_largest_input_before_any_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let (small, large, reference) = (
        dir.path().join("small"),
        dir.path().join("large"),
        dir.path().join("ref"),
    );
    std::fs::write(&small, [1u8; 10]).unwrap();
    std::fs::write(&large, vec![2u8; 3 << 20]).unwrap();
    std::fs::write(&reference, vec![3u8; 3 << 20]).unwrap();
    let files = vec![small.clone(), large, PathBuf::from("-")];
    let mut o = Options::new(files.clone(), Mode::Compress);
    assert!(o.preamble(&files, 0).is_empty(), "no patch, no cparams");
    o.patch_from = Some(reference);
    // The notes of a 3 MiB patch at level 3, whatever the smaller input.
    let expected: Vec<String> = crate::patch::plan(3 << 20, 3 << 20, 3)
        .notes(false)
        .into_iter()
        .map(String::from)
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(o.preamble(&files, 0), expected);
    assert!(
        o.preamble(&files[..1], 0) != expected,
        "planned from the largest"
    );
    o.silent = true;
    assert!(o.preamble(&files, 0).is_empty(), "-qq says none");
    o.show_cparams = true;
    let shown = o.preamble(std::slice::from_ref(&small), 0);
    assert_eq!(shown, crate::tuning::LevelParams::shown_for(&small, 3, 0));
    o.mode = Mode::Decompress;
    assert!(o.preamble(&[small], 0).is_empty(), "only when compressing");
}

/// 26cd9b6's one change: whether an input was copied through is its own,
/// so an input the block decoder takes after one copied through still
/// gets its `-v` line (the binary's coder kept the previous input's flag).
#[test]
fn an_input_decoded_after_one_copied_through_gets_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.zst");
    let frame = dir.path().join("frame.zst");
    std::fs::write(&plain, TEXT).unwrap();
    std::fs::write(
        &frame,
        crate::compress(&TEXT.repeat(10), Params::for_level(3)).unwrap(),
    )
    .unwrap();
    let mut options = Options::new(vec![plain.clone(), frame.clone()], Mode::Decompress);
    options.pass_through = Some(true);
    options.decoder = Decoder::Perfkit;
    options.verbose = true;
    let mut console = Recorder::default();
    assert_eq!(
        run(&options, &mut console),
        Finished::Done { failed: false }
    );
    assert_eq!(std::fs::read(dir.path().join("plain")).unwrap(), TEXT);
    let decoded = std::fs::read(dir.path().join("frame")).unwrap();
    assert_eq!(decoded, TEXT.repeat(10));
    let name = |p: &Path| summary::name(p);
    let line = |p: &Path, n: usize| summary::decompressed(&name(p), n as u64);
    // zstd says nothing of the input copied through, and its line of the other.
    assert!(
        !console.lines.contains(&line(&plain, TEXT.len())),
        "{:?}",
        console.lines
    );
    assert!(
        console.lines.contains(&line(&frame, decoded.len())),
        "{:?}",
        console.lines
    );
}

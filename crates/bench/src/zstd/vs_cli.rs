//! `perfkit bench --only zstd --vs-zstd`: the zstd CLI side by side with
//! perfkit on the same files, level and strategy, perfkit both in process
//! and as a process, interleaved run by run; each perfkit row says what it
//! holds equal with the CLI (issue 64).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use zstdkit::Recipe;

use super::{compress_file, decompress_file, median};
use crate::error::{Error, IoContext, Result, StepContext};
use crate::invocation::{Invocation, Launcher};
use perfkit_measure::{latency_histogram, record};
use perfkit_report::{Row, Section, Value};

/// Runs the zstd CLI with `args`; its wall time, spawn to exit.
fn run_zstd(args: &[&str]) -> Result<Duration> {
    run_timed(Command::new("zstd").args(args))
        .during("running the zstd CLI (install it: apt-get install zstd)")
}

/// Has the zstd CLI write its frame of `input` to `output` at `level`
/// and `strategy` (a `--zstd=strategy=` flag), `extra` flags besides: the
/// frames the compression rows compare sizes with and the decompression
/// rows decode.
fn peer_frame(
    input: &str,
    level: &str,
    strategy: &str,
    extra: &[&str],
    output: &str,
) -> Result<()> {
    let level = format!("-{level}");
    let mut args = vec!["-q", "-f", "--ultra", level.as_str(), strategy];
    args.extend_from_slice(extra);
    args.extend([input, "-o", output]);
    run_zstd(&args).map(drop)
}

/// Wall time of one run of `cmd` from spawn to exit, output discarded.
fn run_timed(cmd: &mut Command) -> Result<Duration> {
    let start = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .doing_with(|| format!("running {cmd:?}"))?;
    let d = start.elapsed();
    if !status.success() {
        return Err(Error::Program(format!("{cmd:?} failed: {status}")));
    }
    Ok(d)
}

/// Same files, same level and strategy, perfkit in-process against the
/// `zstd` CLI, interleaved run by run.
pub(super) fn vs_zstd(
    files: &[(String, PathBuf)],
    recipes: &[Recipe],
    runs: u64,
    scratch: &Path,
    perfkit: &dyn Launcher,
) -> Result<Vec<Section>> {
    let version = Command::new("zstd")
        .arg("--version")
        .output()
        .doing("running zstd --version (install it: apt-get install zstd)")?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    // The version alone (`v1.5.4`), for the rows: libzstd's version
    // decides the frames' sizes, so they name both sides'.
    let cli = version
        .split_whitespace()
        .find(|w| w.starts_with('v') && w[1..].starts_with(|c: char| c.is_ascii_digit()))
        .map_or("version unknown", |w| w.trim_end_matches(','));
    let mut sections = Vec::new();
    for (name, path) in files {
        let size = std::fs::metadata(path)
            .doing_with(|| format!("reading {}'s size", path.display()))?
            .len();
        let mut section = Section::new(format!("vs zstd CLI: {name} ({size} bytes)"));
        let versus = Versus {
            path,
            size,
            runs,
            scratch,
            perfkit,
            cli,
        };
        for &recipe in recipes {
            for threads in [1u32, 2] {
                versus.compress(&mut section, recipe, threads)?;
            }
            versus.decompress(&mut section, recipe)?;
        }
        section.note(format!(
            "peer: {version}; `perfkit` rows stream the file in-process (the library), `perfkit process` rows run `perfkit compress -c` / `decompress -c` as a child like the zstd CLI (spawn to exit, output to /dev/null): compare those two for like with like; \
             vs_zstd = zstd median time / the row's median time (> 1: perfkit faster); medians of {runs} interleaved runs; held_equal (--wide, JSON): what each perfkit row holds equal with the CLI (level, strategy and threads, both frames' sizes and whether they match; the decompress rows decode the CLI's frame)"
        ));
        sections.push(section);
    }
    Ok(sections)
}

/// One file's comparison with the zstd CLI ([`vs_zstd`]): what its
/// compress and decompress rows share.
struct Versus<'a> {
    /// The file, and its size in bytes.
    path: &'a Path,
    size: u64,
    /// Interleaved runs of each side per row.
    runs: u64,
    /// Where the frames whose sizes and decoding the rows compare go.
    scratch: &'a Path,
    /// Starts perfkit as a process, for the `perfkit process` rows.
    perfkit: &'a dyn Launcher,
    /// The zstd CLI's version (`v1.5.4`), for the rows' `held_equal`.
    cli: &'a str,
}

impl Versus<'_> {
    /// The file's size in MB, for the throughput columns.
    fn mb(&self) -> f64 {
        self.size as f64 / 1e6
    }

    /// The path as the zstd CLI's argument.
    fn path_arg(&self) -> Result<&str> {
        self.path.to_str().ok_or_else(|| not_utf8(self.path))
    }

    /// `recipe`'s level and its `--zstd=strategy=` flag, as both sides
    /// are given them.
    fn flags(recipe: Recipe) -> (String, String) {
        (
            recipe.level().to_string(),
            format!("--zstd=strategy={}", recipe.strategy().id()),
        )
    }

    /// The compress rows of `recipe` on `threads` threads: perfkit in
    /// process, as a process and the CLI, timed interleaved, then each
    /// perfkit row given both frames' sizes.
    fn compress(&self, section: &mut Section, recipe: Recipe, threads: u32) -> Result<()> {
        let (path, perfkit) = (self.path, self.perfkit);
        let (level, strategy) = Self::flags(recipe);
        let path_s = self.path_arg()?;
        let t_flag = if threads == 1 {
            "--single-thread".to_owned()
        } else {
            format!("-T{threads}")
        };
        let params = recipe
            .params()
            .workers(if threads == 1 { 0 } else { threads });
        let mut ours = Vec::new();
        let mut process = Vec::new();
        let mut theirs = Vec::new();
        let mut made = 0;
        for _ in 0..self.runs {
            let t = Instant::now();
            made = compress_file(path, params)?;
            ours.push(t.elapsed());
            process.push(run_timed(&mut perfkit.command(&Invocation::Compress {
                input: path,
                recipe,
                threads: Some(threads),
                output: None,
            }))?);
            theirs.push(run_zstd(&[
                "-q",
                "-c",
                "-f",
                "--ultra",
                &format!("-{level}"),
                &strategy,
                &t_flag,
                path_s,
            ])?);
        }
        let what = format!("compress {recipe} T{threads}");
        push_pair(
            section,
            &what,
            [&mut ours, &mut process, &mut theirs],
            self.mb(),
        );
        // Equal work (issue 64): both are libzstd at the same level,
        // strategy and threads; the frames' sizes say whether they
        // match, each perfkit row beside the CLI's.
        let peer_file = self.scratch.join("peer-sized.zst");
        let peer_s = peer_file.to_str().ok_or_else(|| not_utf8(&peer_file))?;
        peer_frame(path_s, &level, &strategy, &[&t_flag], peer_s)?;
        let peer_bytes = file_size(&peer_file)?;
        let ours_file = self.scratch.join("perfkit-sized.zst");
        perfkit_measure::child::run(
            perfkit
                .command(&Invocation::Compress {
                    input: path,
                    recipe,
                    threads: Some(threads),
                    output: Some(&ours_file),
                })
                .stdin(Stdio::null())
                .stdout(Stdio::null()),
        )?;
        let process_bytes = file_size(&ours_file)?;
        let _ = std::fs::remove_file(&ours_file);
        let threads_words = if threads == 1 {
            "on one thread".to_owned()
        } else {
            format!("on {threads} workers")
        };
        for (side, ours_bytes) in [("perfkit", made), ("perfkit process", process_bytes)] {
            let ratio = ours_bytes as f64 / peer_bytes.max(1) as f64;
            held_row(
                section,
                &format!("{what} {side}"),
                &[
                    ("out_bytes", Value::from(ours_bytes)),
                    ("peer_out_bytes", Value::from(peer_bytes)),
                    ("size_vs_peer", Value::num(ratio, 4)),
                ],
                format!(
                    "level {level} strategy {} {threads_words}, libzstd {} (perfkit) and the CLI's own, {}; frames {ours_bytes} bytes (perfkit) and {peer_bytes} (zstd {t_flag}), {ratio:.4}x, {}",
                    recipe.strategy().id(),
                    zstdkit::zstd_version(),
                    self.cli,
                    crate::peer::size_verdict(ours_bytes, peer_bytes)
                ),
            );
        }
        Ok(())
    }

    /// The decompress rows of `recipe`: the same frame, made by the zstd
    /// CLI, decoded by perfkit in process, as a process and by the CLI.
    fn decompress(&self, section: &mut Section, recipe: Recipe) -> Result<()> {
        let (size, perfkit) = (self.size, self.perfkit);
        let (level, strategy) = Self::flags(recipe);
        let path_s = self.path_arg()?;
        let frame = self.scratch.join("peer.zst");
        let frame_s = frame.to_str().ok_or_else(|| not_utf8(&frame))?;
        peer_frame(path_s, &level, &strategy, &[], frame_s)?;
        let mut ours = Vec::new();
        let mut process = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..self.runs {
            let t = Instant::now();
            let n = decompress_file(&frame)?;
            ours.push(t.elapsed());
            if n != size {
                return Err(Error::Mismatch(format!(
                    "decompressed {n} bytes, expected {size}"
                )));
            }
            process.push(run_timed(
                &mut perfkit.command(&Invocation::Decompress { input: &frame }),
            )?);
            theirs.push(run_zstd(&["-q", "-d", "-c", frame_s])?);
        }
        let what = format!("decompress {recipe}");
        push_pair(
            section,
            &what,
            [&mut ours, &mut process, &mut theirs],
            self.mb(),
        );
        let frame_bytes = file_size(&frame)?;
        for side in ["perfkit", "perfkit process"] {
            held_row(
                section,
                &format!("{what} {side}"),
                &[("in_bytes", Value::from(frame_bytes))],
                format!(
                    "the same frame, the zstd CLI's ({frame_bytes} bytes), decoded by both to {size} bytes (checked in process)"
                ),
            );
        }
        Ok(())
    }
}

/// A file's size in bytes.
fn file_size(path: &Path) -> Result<u64> {
    Ok(std::fs::metadata(path)
        .doing_with(|| format!("reading {}'s size", path.display()))?
        .len())
}

/// Row `name` of `section` gets `cols` and a `held_equal` column saying
/// what it holds equal with the zstd CLI (issue 64).
fn held_row(section: &mut Section, name: &str, cols: &[(&str, Value)], equal: String) {
    if let Some(row) = section.rows.iter_mut().find(|r| r.name == name) {
        let mut with = row.clone();
        for (c, v) in cols {
            with = with.col(c, v.clone());
        }
        *row = with.col("held_equal", equal);
    }
}

/// A path the zstd CLI cannot be given as an argument here.
fn not_utf8(path: &Path) -> Error {
    Error::Invalid(format!("path is not UTF-8: {}", path.display()))
}

/// The rows of one comparison: perfkit in-process, perfkit as a process,
/// and the zstd CLI (always a process), each with its median throughput;
/// both perfkit rows carry `vs_zstd` against the CLI.
fn push_pair(section: &mut Section, what: &str, sides: [&mut [Duration]; 3], mb: f64) {
    let hist = |v: &[Duration]| {
        let mut h = latency_histogram();
        v.iter().for_each(|d| record(&mut h, *d));
        h
    };
    let [ours, process, theirs] = sides;
    let mt = median(theirs);
    for (name, v) in [("perfkit", ours), ("perfkit process", process)] {
        let m = median(v);
        section.row(
            Row::new(format!("{what} {name}"))
                .col("throughput_mb_s", Value::num(mb / m.as_secs_f64(), 1))
                .col("vs_zstd", Value::num(mt.as_secs_f64() / m.as_secs_f64(), 3))
                .elapsed(v.iter().sum())
                .latency(hist(v)),
        );
    }
    section.row(
        Row::new(format!("{what} zstd"))
            .col("throughput_mb_s", Value::num(mb / mt.as_secs_f64(), 1))
            .elapsed(theirs.iter().sum())
            .latency(hist(theirs)),
    );
}

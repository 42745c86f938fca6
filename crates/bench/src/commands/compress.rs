//! `compress` and `decompress` beside the zstd CLI on inputs nobody here
//! chose (issue 64): files found on this machine at run time and
//! already-compressed data, each row saying what it holds equal with the
//! peer, the summary giving the worst workload of each group, named.

use std::path::Path;
use std::process::{Command, Stdio};

use perfkit_measure::child::{self, Spawner};
use perfkit_report::{Section, Value};
use zstdkit::Recipe;

use super::{RUNS, Side, Work, case, case_rounds, held, installed, of_workloads, process};
use crate::error::{Error, IoContext, Result};
use crate::invocation::{Invocation, Launcher};
use crate::zstd::found::{ALREADY_COMPRESSED, FOUND, FOUND_AT_LEAST, FOUND_SIZE, found_bytes};

/// Group of the compress rows in the summary.
const COMPRESS_GROUP: &str = "compress --recipe balanced beside zstd on files found here";
/// Group of the decompress rows in the summary.
const DECOMPRESS_GROUP: &str = "decompress beside zstd -d on files found here";

/// `compress --recipe balanced` and `decompress` beside the zstd CLI at
/// the recipe's level and strategy, one thread each, on the inputs found on
/// this machine (those of the zip rows, and gzip files). Both are libzstd:
/// the compress rows give both frames' sizes, and the decompress rows
/// decode the same frame (perfkit's, checked to decode to the input
/// through the zstd CLI first).
pub(super) fn compress_found_cases(
    section: &mut Section,
    d: &Path,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    if !installed("zstd") {
        section.note(
            "zstd not installed: compress/decompress of files found here were left out (apt-get install zstd)",
        );
        return Ok(());
    }
    let recipe = Recipe::Balanced;
    let level = format!("-{}", recipe.level());
    let strategy = format!("--zstd=strategy={}", recipe.strategy().id());
    let peer_args = ["-q", "-f", "--ultra", &level, &strategy, "--single-thread"];
    let inputs = FOUND.iter().chain([&ALREADY_COMPRESSED]);
    for (i, (what, dirs, holding)) in inputs.enumerate() {
        let data = found_bytes(dirs, holding, FOUND_SIZE);
        if data.len() < FOUND_AT_LEAST {
            section.note(format!(
                "compress of {what}: only {} bytes found under {}, left out",
                data.len(),
                dirs.join(", ")
            ));
            continue;
        }
        let input = d.join(format!("zstd-found-{i}.bin"));
        std::fs::write(&input, &data).doing("writing a compress input found on this machine")?;
        let (frame, peer_frame) = (d.join("zstd-found.zst"), d.join("zstd-found-peer.zst"));
        // The frames whose sizes the row gives, written once, untimed.
        child::run(
            perfkit
                .command(&Invocation::Compress {
                    input: &input,
                    recipe,
                    threads: Some(1),
                    output: Some(&frame),
                })
                .stdin(Stdio::null())
                .stdout(Stdio::null()),
        )?;
        child::run(
            Command::new("zstd")
                .args(peer_args)
                .arg(&input)
                .arg("-o")
                .arg(&peer_frame),
        )?;
        decodes_to(&frame, &data, what)?;
        let size = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| m.len())
                .doing("reading a frame's size")
        };
        let (ours_bytes, peer_bytes) = (size(&frame)?, size(&peer_frame)?);

        let (mut ours, mut peer) = (Side::default(), Side::default());
        let mut rounds = case_rounds(RUNS);
        while rounds.another() {
            process(
                spawner,
                &mut ours,
                &mut perfkit.command(&Invocation::Compress {
                    input: &input,
                    recipe,
                    threads: Some(1),
                    output: None,
                }),
            )?;
            process(
                spawner,
                &mut peer,
                Command::new("zstd").args(peer_args).arg("-c").arg(&input),
            )?;
        }
        let work = Work::Bytes(data.len() as u64);
        let name = format!("compress --recipe balanced -T 1, {what}");
        let peer_name = format!("zstd {level} {strategy} --single-thread, {what}");
        case(section, &name, work, &ours, None, Some((&peer_name, &peer)));
        sizes_held(section, &name, recipe, ours_bytes, peer_bytes);
        of_workloads(section, COMPRESS_GROUP);

        let (mut ours, mut peer) = (Side::default(), Side::default());
        let mut rounds = case_rounds(RUNS);
        while rounds.another() {
            process(
                spawner,
                &mut ours,
                &mut perfkit.command(&Invocation::Decompress { input: &frame }),
            )?;
            process(
                spawner,
                &mut peer,
                Command::new("zstd").args(["-q", "-d", "-c"]).arg(&frame),
            )?;
        }
        let name = format!("decompress, {what}");
        let peer_name = format!("zstd -d, {what}");
        case(section, &name, work, &ours, None, Some((&peer_name, &peer)));
        frame_held(section, &name, ours_bytes, data.len() as u64);
        of_workloads(section, DECOMPRESS_GROUP);
        for f in [&input, &frame, &peer_frame] {
            let _ = std::fs::remove_file(f);
        }
    }
    Ok(())
}

/// The zstd CLI decodes `frame` to exactly `data`, so the decompress rows
/// time the same work on both sides.
fn decodes_to(frame: &Path, data: &[u8], what: &str) -> Result<()> {
    let out = Command::new("zstd")
        .args(["-q", "-d", "-c"])
        .arg(frame)
        .stdin(Stdio::null())
        .output()
        .doing("running zstd -d on perfkit's frame")?;
    if !out.status.success() || out.stdout != data {
        return Err(Error::Mismatch(format!(
            "zstd -d of perfkit's frame of {what} is not the input ({} bytes back of {})",
            out.stdout.len(),
            data.len()
        )));
    }
    Ok(())
}

/// Equal work of a compress row (issue 64): both sides are libzstd at
/// `recipe`'s level and strategy on one thread (perfkit's bundled libzstd
/// and the CLI's own, whose versions may differ: 1.5.7 and 1.5.4 here,
/// where perfkit's frames are 0.03-1.1 % smaller); row `perfkit {name}`
/// gets both frames' sizes and says whether they match.
pub(super) fn sizes_held(
    section: &mut Section,
    name: &str,
    recipe: Recipe,
    ours_bytes: u64,
    peer_bytes: u64,
) {
    let ratio = ours_bytes as f64 / peer_bytes.max(1) as f64;
    held(
        section,
        &format!("perfkit {name}"),
        &[
            ("out_bytes", Value::from(ours_bytes)),
            ("peer_out_bytes", Value::from(peer_bytes)),
            ("size_vs_peer", Value::num(ratio, 4)),
        ],
        format!(
            "the same file, level {} strategy {} on one thread, libzstd {} (perfkit) and the zstd CLI's {}; frames {ours_bytes} bytes (perfkit) and {peer_bytes} (zstd), {ratio:.4}x{}",
            recipe.level(),
            recipe.strategy().id(),
            zstdkit::zstd_version(),
            cli_version(),
            // Same library, same level: the frames must match to the byte;
            // anything else is named with the verdict every row uses.
            if ours_bytes == peer_bytes {
                ", the same size".to_owned()
            } else {
                format!(
                    ", not the same size ({})",
                    crate::peer::size_verdict(ours_bytes, peer_bytes)
                )
            }
        ),
    );
}

/// The zstd CLI's version as it prints it (`v1.5.4`), or "version
/// unknown": libzstd's version decides the frames' sizes, so the rows name
/// both sides'.
fn cli_version() -> String {
    let out = Command::new("zstd")
        .arg("-V")
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.split_whitespace()
        .find(|w| w.starts_with('v') && w[1..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|w| w.trim_end_matches(',').to_owned())
        .unwrap_or_else(|| "version unknown".into())
}

/// Equal work of a decompress row: both sides decode the same frame of
/// `frame_bytes` to `out_bytes`.
pub(super) fn frame_held(section: &mut Section, name: &str, frame_bytes: u64, out_bytes: u64) {
    held(
        section,
        &format!("perfkit {name}"),
        &[("in_bytes", Value::from(frame_bytes))],
        format!(
            "the same frame (perfkit's, {frame_bytes} bytes) decoded to the same {out_bytes} bytes, checked"
        ),
    );
}

/// What the corpus file's compress row holds equal: the zstd CLI's frame
/// of `input` (written here, untimed) beside perfkit's `frame`.
pub(super) fn corpus_held(
    section: &mut Section,
    d: &Path,
    input: &Path,
    frame: &Path,
    recipe: Recipe,
) -> Result<()> {
    let peer_frame = d.join("corpus-peer.zst");
    child::run(
        Command::new("zstd")
            .args([
                "-q",
                "-f",
                "--ultra",
                &format!("-{}", recipe.level()),
                &format!("--zstd=strategy={}", recipe.strategy().id()),
                "--single-thread",
            ])
            .arg(input)
            .arg("-o")
            .arg(&peer_frame),
    )?;
    let size = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.len())
            .doing("reading a frame's size")
    };
    let (ours_bytes, peer_bytes) = (size(frame)?, size(&peer_frame)?);
    let _ = std::fs::remove_file(&peer_frame);
    sizes_held(
        section,
        "compress --recipe balanced",
        recipe,
        ours_bytes,
        peer_bytes,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfkit_report::Row;

    /// Frames of one library at one level must match to the byte; a pair
    /// that does not is named with its size verdict, not only "not the
    /// same".
    #[test]
    fn a_size_difference_is_given_with_its_verdict() {
        let mut section = Section::new("commands: compress");
        section.rows.push(Row::new("perfkit compress"));
        sizes_held(&mut section, "compress", Recipe::Balanced, 984, 1000);
        let Some(Value::Text(held)) = section.rows[0].get("held_equal") else {
            panic!("no held_equal: {:?}", section.rows[0]);
        };
        assert!(
            held.ends_with("0.9840x, not the same size (NOT equal: 1.6 % smaller)"),
            "{held}"
        );
    }
}

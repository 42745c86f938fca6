//! The zip rows of the commands part: `zip` and `unzip -t` of the corpus
//! file, zips of files found on this machine, and `zip -d`, each beside
//! zipstream in this process and Info-ZIP. They stand alone as the one
//! group of cases that share the archive inputs and the size columns.

use std::path::Path;
use std::process::Command;

use perfkit_measure::child::Spawner;
use perfkit_report::{Section, Value};

use super::{
    INPUT_SIZE, RUNS, Side, Work, case, case_rounds, held, installed, library, of_workloads,
    process,
};
use crate::error::{IoContext, Result};
use crate::invocation::{Invocation, Launcher};
use crate::zstd::found::{FOUND, FOUND_AT_LEAST, FOUND_SIZE, found_bytes};

/// `zip -6` and `unzip -t` of the corpus file, beside zipstream in this
/// process and Info-ZIP.
pub(super) fn zip_cases(
    section: &mut Section,
    d: &Path,
    input: &Path,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    let work = Work::Bytes(INPUT_SIZE as u64);
    let have_zip = installed("zip") && installed("unzip");
    let archive = d.join("corpus.zip");
    let peer_archive = d.join("peer.zip");
    let (mut ours, mut lib, mut peer) = (Side::default(), Side::default(), Side::default());
    let mut rounds = case_rounds(RUNS);
    while rounds.another() {
        zip_ours(spawner, perfkit, d, "corpus.bin", "corpus.zip", &mut ours)?;
        library(&mut lib, || zip_in_process(input))?;
        if have_zip {
            zip_peer(spawner, input, &peer_archive, &mut peer)?;
        }
    }
    case(
        section,
        "zip (deflate -6)",
        work,
        &ours,
        Some(("zipstream ZipWriter, deflate 6, to memory", &lib)),
        have_zip.then_some(("Info-ZIP zip -6", &peer)),
    );
    held_equal(
        section,
        "perfkit zip (deflate -6)",
        &archive,
        have_zip.then_some(peer_archive.as_path()),
    );
    let (mut ours, mut peer) = (Side::default(), Side::default());
    let mut rounds = case_rounds(RUNS);
    while rounds.another() {
        process(
            spawner,
            &mut ours,
            &mut perfkit.command(&Invocation::UnzipTest { archive: &archive }),
        )?;
        if have_zip {
            process(
                spawner,
                &mut peer,
                Command::new("unzip").args(["-tq"]).arg(&archive),
            )?;
        }
    }
    case(
        section,
        "unzip -t",
        work,
        &ours,
        None,
        have_zip.then_some(("Info-ZIP unzip -t", &peer)),
    );
    if have_zip {
        let bytes = std::fs::metadata(&archive)
            .doing("reading the size of perfkit's archive")?
            .len();
        held(
            section,
            "perfkit unzip -t",
            &[],
            format!(
                "the same archive, perfkit's zip -6 of the corpus file ({bytes} bytes): both inflate every entry and check its CRC-32, writing nothing"
            ),
        );
    }
    if !have_zip {
        section.note(
            "Info-ZIP zip/unzip not installed: zip and unzip -t have no peer row (apt-get install zip unzip)",
        );
    }
    Ok(())
}

/// One timed run of perfkit's `zip -6` of the file named `input` into
/// the archive named `archive`, both in `d` (where it runs). zip updates
/// an archive that exists (as Info-ZIP does): every run writes a new one,
/// like the peer's.
fn zip_ours(
    spawner: &mut Spawner,
    perfkit: &dyn Launcher,
    d: &Path,
    input: &str,
    archive: &str,
    ours: &mut Side,
) -> Result<()> {
    let _ = std::fs::remove_file(d.join(archive));
    process(
        spawner,
        ours,
        perfkit
            .command(&Invocation::Zip {
                archive: Path::new(archive),
                input: Path::new(input),
                level: 6,
            })
            .current_dir(d),
    )
}

/// One timed run of Info-ZIP's `zip -6 -j` of `input` into a new
/// `archive`, [`zip_ours`]'s peer.
fn zip_peer(spawner: &mut Spawner, input: &Path, archive: &Path, peer: &mut Side) -> Result<()> {
    let _ = std::fs::remove_file(archive);
    process(
        spawner,
        peer,
        Command::new("zip")
            .args(["-q", "-6", "-j"])
            .arg(archive)
            .arg(input),
    )
}

/// Equal work (issue 64): a `zip` row's times compare only beside the
/// archive each side wrote, so row `name` gets both sizes (`out_bytes`,
/// `peer_out_bytes`, `size_vs_peer`) and says what is held equal.
fn held_equal(section: &mut Section, name: &str, ours: &Path, peer: Option<&Path>) {
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    let Some(row) = section.rows.iter_mut().find(|r| r.name == name) else {
        return;
    };
    let Some(ours_bytes) = size(ours) else {
        return;
    };
    let mut with = row.clone().col("out_bytes", Value::from(ours_bytes));
    if let Some(theirs) = peer.and_then(size) {
        let ratio = ours_bytes as f64 / theirs.max(1) as f64;
        with = with
            .col("peer_out_bytes", Value::from(theirs))
            .col("size_vs_peer", Value::num(ratio, 4))
            .col(
                "held_equal",
                format!(
                    "the same file at level 6; archives {ours_bytes} bytes (perfkit) and {theirs} (Info-ZIP), {ratio:.4}x, {}",
                    crate::peer::size_verdict(ours_bytes, theirs)
                ),
            );
    }
    *row = with;
}

/// `zip -6` beside Info-ZIP on the inputs found on this machine
/// ([`FOUND`]), each row with both archives' sizes; the summary gives
/// the worst of them.
pub(super) fn zip_found_cases(
    section: &mut Section,
    d: &Path,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    let have_zip = installed("zip");
    for (i, (what, dirs, holding)) in FOUND.iter().enumerate() {
        let data = found_bytes(dirs, holding, FOUND_SIZE);
        if data.len() < FOUND_AT_LEAST {
            section.note(format!(
                "zip -6 of {what}: only {} bytes found under {}, left out",
                data.len(),
                dirs.join(", ")
            ));
            continue;
        }
        let input = format!("found-{i}.bin");
        std::fs::write(d.join(&input), &data).doing("writing a zip input found on this machine")?;
        let archive_name = format!("found-{i}.zip");
        let (archive, peer_archive) = (d.join(&archive_name), d.join("found-peer.zip"));
        let (mut ours, mut peer) = (Side::default(), Side::default());
        let mut rounds = case_rounds(RUNS);
        while rounds.another() {
            zip_ours(spawner, perfkit, d, &input, &archive_name, &mut ours)?;
            if have_zip {
                zip_peer(spawner, &d.join(&input), &peer_archive, &mut peer)?;
            }
        }
        let name = format!("zip (deflate -6), {what}");
        // Row names are unique in a section: the peer's names the input.
        let peer_name = format!("Info-ZIP zip -6, {what}");
        case(
            section,
            &name,
            Work::Bytes(data.len() as u64),
            &ours,
            None,
            have_zip.then_some((peer_name.as_str(), &peer)),
        );
        held_equal(
            section,
            &format!("perfkit {name}"),
            &archive,
            have_zip.then_some(peer_archive.as_path()),
        );
        of_workloads(section, "zip -6 beside Info-ZIP on files found here");
    }
    Ok(())
}

/// Stored copies of the corpus file in the `zip -d` case's archive:
/// with a small entry to delete, about 200 MB.
const DELETE_COPIES: usize = 12;

/// Runs of the `zip -d` case: its CPU is a median of five.
const DELETE_RUNS: usize = 5;

/// `zip -d` of one small entry from an archive of about 200 MB, beside
/// Info-ZIP's: both copy the entries they keep as they are, so the cost
/// is moving 200 MB into a new file (each run starts from a fresh copy
/// of the archive, made outside the timing).
pub(super) fn zip_delete_case(
    section: &mut Section,
    d: &Path,
    input: &Path,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    use std::io::Write;
    let data = std::fs::read(input).doing_with(|| format!("reading {}", input.display()))?;
    let base = d.join("delete-base.zip");
    let file = std::fs::File::create(&base).doing("creating the zip -d archive")?;
    let mut w = zipstream::ZipWriter::new_seekable(std::io::BufWriter::new(file))?;
    for i in 0..DELETE_COPIES {
        w.add_bytes(
            zipstream::EntryOptions::file(format!("part-{i}.bin"))
                .method(zipstream::Method::Stored)
                .mtime(1_700_000_000),
            &data,
        )?;
    }
    w.add_bytes(
        zipstream::EntryOptions::file("victim.txt").mtime(1_700_000_000),
        b"deleted by each run\n",
    )?;
    w.finish()?.flush().doing("writing the zip -d archive")?;
    let size = std::fs::metadata(&base)
        .doing("reading the zip -d archive")?
        .len();
    let have_zip = installed("zip");
    let (ours_zip, peer_zip) = (d.join("delete-ours.zip"), d.join("delete-peer.zip"));
    let (mut ours, mut peer) = (Side::default(), Side::default());
    for _ in 0..DELETE_RUNS {
        std::fs::copy(&base, &ours_zip).doing("copying the zip -d archive")?;
        process(
            spawner,
            &mut ours,
            perfkit
                .command(&Invocation::ZipDelete {
                    archive: Path::new("delete-ours.zip"),
                    entry: "victim.txt",
                })
                .current_dir(d),
        )?;
        if have_zip {
            std::fs::copy(&base, &peer_zip).doing("copying the zip -d archive")?;
            process(
                spawner,
                &mut peer,
                Command::new("zip")
                    .args(["-q", "-d"])
                    .arg(&peer_zip)
                    .arg("victim.txt"),
            )?;
        }
    }
    // What each run left, for the row: the same entries kept as they were.
    let left = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    let (ours_left, peer_left) = (left(&ours_zip), left(&peer_zip));
    let _ = std::fs::remove_file(&ours_zip);
    let _ = std::fs::remove_file(&peer_zip);
    let _ = std::fs::remove_file(&base);
    let name = format!("zip -d (one entry of a {} MB archive)", size / 1_000_000);
    case(
        section,
        &name,
        Work::Bytes(size),
        &ours,
        None,
        have_zip.then_some(("Info-ZIP zip -d", &peer)),
    );
    if let (true, Some(o), Some(p)) = (have_zip, ours_left, peer_left) {
        let ratio = o as f64 / p.max(1) as f64;
        held(
            section,
            &format!("perfkit {name}"),
            &[],
            format!(
                "the same {size}-byte archive and entry deleted, the other entries copied as they are; archives left {o} bytes (perfkit) and {p} (Info-ZIP), {ratio:.4}x, {}",
                crate::peer::size_verdict(o, p)
            ),
        );
    }
    section.note(format!(
        "zip -d: {DELETE_RUNS} interleaved runs, medians; the archive is {DELETE_COPIES} stored copies of the corpus file and one small entry, the one deleted"
    ));
    Ok(())
}

/// The zip command's work done by the library in this process: the same
/// file as one deflate-6 entry, written to memory.
fn zip_in_process(input: &Path) -> Result<()> {
    let data = std::fs::read(input).doing_with(|| format!("reading {}", input.display()))?;
    let mut w = zipstream::ZipWriter::new(Vec::with_capacity(data.len() / 2));
    w.add_bytes(
        zipstream::EntryOptions::file("corpus.bin")
            .mtime(1_700_000_000)
            .level(6),
        &data,
    )?;
    std::hint::black_box(w.finish()?);
    Ok(())
}

//! The archive once written: `-T`'s test (by perfkit or a `-TT`
//! command), `-o`'s time and `-v`'s totals.

use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use zipstream::{ExtractOptions, ZipArchive};

use super::{Options, log};

/// The uncompressed and compressed sizes of every entry of `archive`
/// (`-v`'s totals), if it can be read back.
pub(super) fn archive_totals(archive: &Path) -> Option<(u64, u64)> {
    let f = fs::File::open(archive).ok()?;
    let a = ZipArchive::new(io::BufReader::new(f)).ok()?;
    Some(
        a.entries()
            .iter()
            .fold((0, 0), |(s, c), e| (s + e.size, c + e.compressed_size)),
    )
}

/// `-o`: gives the archive written the time of its newest entry that is
/// not a folder.
pub(super) fn set_latest_time(archive: &Path, shown: &str) -> Result<()> {
    let f = fs::File::open(archive).with_context(|| format!("opening {shown}"))?;
    let a = ZipArchive::new(io::BufReader::new(f.try_clone()?))
        .with_context(|| format!("reading {shown}"))?;
    // Folders do not count, as in Info-ZIP.
    let Some(newest) = a.newest_file_time() else {
        return Ok(());
    };
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(newest.max(0) as u64);
    fs::File::options()
        .write(true)
        .open(archive)
        .and_then(|f| f.set_modified(t))
        .with_context(|| format!("setting the time of {shown} (-o)"))?;
    Ok(())
}

/// `zip -T ARCHIVE` with nothing to add: tests the archive as it is, as
/// Info-ZIP does (`test of NAME OK`, or the failure and exit 1).
pub(super) fn test_existing(archive: &Path, shown: &str, opts: &Options) -> Result<ExitCode> {
    let pw = opts.password.get(false, false)?;
    let mut f = fs::File::open(archive).with_context(|| format!("opening {shown}"))?;
    test_written(&mut f, &pw).with_context(|| format!("test of {shown} FAILED"))?;
    if !opts.quiet {
        println!("test of {shown} OK");
    }
    Ok(ExitCode::SUCCESS)
}

/// `-T -TT CMD`: runs CMD through the shell on the archive just written
/// (still under its temporary name, given as `/proc/PID/fd/N`): `{}` in
/// CMD is that name, else it is added at the end. Whether CMD exited 0;
/// on failure, Info-ZIP's lines are printed.
pub(super) fn test_with_command(cmd: &str, file: &mut fs::File, shown: &str) -> Result<bool> {
    use std::os::fd::AsRawFd;
    file.flush()?;
    let path = format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd());
    let quoted = format!("'{path}'");
    let line = if cmd.contains("{}") {
        cmd.replace("{}", &quoted)
    } else {
        format!("{cmd} {quoted}")
    };
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .stdin(std::process::Stdio::null())
        .status()
        .with_context(|| format!("running the test command (-TT) {cmd:?}"))?;
    if status.success() {
        return Ok(true);
    }
    println!("test of {shown} FAILED");
    let error = "zip error: Zip file invalid, could not spawn unzip, or wrong unzip (original files unmodified)";
    // Info-ZIP ends this one with a blank line.
    println!("\n{error}\n");
    log::failed(error);
    Ok(false)
}

/// `-T`: reads the archive just written back from its start and checks
/// every entry (CRC, AES authentication), as `unzip -t` would.
pub(super) fn test_written(file: &mut fs::File, pw: &Option<Vec<u8>>) -> Result<()> {
    use std::io::Seek;
    let mut f = file.try_clone()?;
    f.seek(io::SeekFrom::Start(0))?;
    let mut a = ZipArchive::new(io::BufReader::with_capacity(64 << 10, f))?;
    let opts = ExtractOptions {
        password: pw.clone(),
        // Our own archive, just written from these files: the zip-bomb
        // limits guard against strangers' archives, not this one.
        max_total_bytes: u64::MAX,
        max_entries: u64::MAX,
        max_ratio: u64::MAX,
        ..ExtractOptions::default()
    };
    zipstream::read_archive_data(&mut a, &opts, &|_| true, &mut |_, _| Ok(()))?;
    Ok(())
}

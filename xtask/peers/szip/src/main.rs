//! `szip-peer`: s-zip 0.15.0 on its own default flate2 backend
//! (miniz_oxide), driven by `perfkit bench --only zip` over stdin/stdout.
//!
//! perfkit cannot link this beside its own code: one binary links one
//! flate2 backend, and perfkit's is zlib-rs. So perfkit starts this program
//! once per bench, loads each scenario's entries into it, and asks for one
//! archive at a time between its own, which keeps the comparison interleaved
//! iteration by iteration. Each archive is timed here, in this process, with
//! the same clocks perfkit uses for its own writers (perfkit-bench's
//! harness, linked here), so the pipe costs nothing that is reported. See
//! [`protocol`] for the requests.

#![forbid(unsafe_code)]

mod protocol;

use std::fs::File;
use std::io::{self, BufRead, Cursor, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use perfkit_measure::{clock::CpuClock, memory};
use protocol::{Mode, Request};

type Error = Box<dyn std::error::Error>;

/// The scenario currently loaded: entry names and their bytes.
type Entries = Vec<(String, Vec<u8>)>;

/// The longest request or entry-header line accepted, newline included. An
/// entry name is at most 65,535 bytes (a ZIP limit) and a path a few KiB, so
/// this leaves room, and a sender that never ends a line cannot grow memory
/// for ever.
const MAX_LINE: usize = 128 << 10;

/// Reads one line into `line` (cleared first), as `read_line` does, but
/// fails rather than hold more than [`MAX_LINE`] bytes. Returns 0 at the end
/// of input.
fn read_line_capped(
    input: &mut impl BufRead,
    line: &mut String,
    what: &str,
) -> Result<usize, Error> {
    let mut bytes = std::mem::take(line).into_bytes();
    bytes.clear();
    let n = input
        .by_ref()
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut bytes)?;
    if n == MAX_LINE && bytes.last() != Some(&b'\n') {
        return Err(format!("{what} is longer than {MAX_LINE} bytes").into());
    }
    *line = String::from_utf8(bytes).map_err(|_| format!("{what} is not UTF-8"))?;
    Ok(n)
}

fn main() -> ExitCode {
    let mut input = io::stdin().lock();
    let mut out = io::stdout().lock();
    match serve(&mut input, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // perfkit reads this line and names the peer in its own error.
            let _ = writeln!(out, "err {}", one_line(&e.to_string()));
            let _ = out.flush();
            ExitCode::FAILURE
        }
    }
}

/// Answers requests until stdin ends (success) or a request cannot be read
/// (an error: the stream may be out of step, so the peer stops).
fn serve(input: &mut impl BufRead, out: &mut impl Write) -> Result<(), Error> {
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let mut entries: Entries = Vec::new();
    // Reused across archives, as perfkit reuses its output buffer: the
    // measurement is the writer, not the allocator growing a fresh Vec.
    let mut buf = Vec::new();
    writeln!(out, "{}", protocol::HELLO)?;
    out.flush()?;
    let mut line = String::new();
    loop {
        if read_line_capped(input, &mut line, "a request line")? == 0 {
            return Ok(());
        }
        let request = protocol::parse_request(line.trim_end_matches('\n'))?;
        let reply = match request {
            Request::Load { count } => {
                entries = read_entries(input, count)?;
                let bytes: usize = entries.iter().map(|(_, d)| d.len()).sum();
                Ok(format!("ok entries={} bytes={bytes}", entries.len()))
            }
            Request::Run { mode, level } => run(mode, level, &entries, &rt, &mut buf),
            Request::Save { mode, level, path } => save(mode, level, &entries, &rt, &path),
        };
        match reply {
            Ok(r) => writeln!(out, "{r}")?,
            Err(e) => writeln!(out, "err {}", one_line(&e.to_string()))?,
        }
        out.flush()?;
    }
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

fn read_entries(input: &mut impl BufRead, count: usize) -> Result<Entries, Error> {
    let mut entries = Vec::new();
    let mut header = String::new();
    for i in 0..count {
        if read_line_capped(input, &mut header, "an entry header")? == 0 {
            return Err(format!("stdin ended before entry {i} of {count}").into());
        }
        let (len, name) = protocol::parse_entry_header(header.trim_end_matches('\n'))?;
        // Grows as bytes arrive, so a forged length cannot reserve memory
        // the sender never sends.
        let mut data = Vec::new();
        input.by_ref().take(len).read_to_end(&mut data)?;
        if data.len() as u64 != len {
            return Err(format!(
                "entry {name:?}: stdin ended after {} of {len} bytes",
                data.len()
            )
            .into());
        }
        entries.push((name, data));
    }
    Ok(entries)
}

/// Writes one archive into `out` (cleared, its capacity kept) with the
/// calls perfkit's in-process s-zip rows make.
fn write_archive(
    mode: Mode,
    level: u32,
    entries: &Entries,
    rt: &tokio::runtime::Runtime,
    mut out: Vec<u8>,
) -> Result<Vec<u8>, Error> {
    out.clear();
    match mode {
        Mode::Sync => {
            let mut w =
                s_zip::StreamingZipWriter::from_writer_with_compression(Cursor::new(out), level)?;
            for (n, d) in entries {
                w.add_entry(n, d)?;
            }
            Ok(w.finish()?.into_inner())
        }
        Mode::Async => rt.block_on(async {
            let mut w = s_zip::AsyncStreamingZipWriter::from_writer_with_compression(
                Cursor::new(out),
                level,
            );
            for (n, d) in entries {
                w.add_entry(n, d).await?;
            }
            Ok(w.finish().await?.into_inner())
        }),
    }
}

fn run(
    mode: Mode,
    level: u32,
    entries: &Entries,
    rt: &tokio::runtime::Runtime,
    buf: &mut Vec<u8>,
) -> Result<String, Error> {
    // The same order of readings as perfkit's own loop: RSS mark, clocks,
    // the archive, clocks, RSS peak.
    let rss0 = memory::reset_peak();
    let (c0, w0) = (CpuClock::Thread.read()?, Instant::now());
    let out = write_archive(mode, level, entries, rt, std::mem::take(buf))?;
    let wall = w0.elapsed();
    let cpu = CpuClock::Thread.read()? - c0;
    let grew = memory::status().hwm_bytes.saturating_sub(rss0);
    let n = out.len();
    *buf = out;
    Ok(format!(
        "ok cpu_ns={} wall_ns={} out_bytes={n} rss_growth_bytes={grew}",
        cpu.as_nanos(),
        wall.as_nanos()
    ))
}

fn save(
    mode: Mode,
    level: u32,
    entries: &Entries,
    rt: &tokio::runtime::Runtime,
    path: &str,
) -> Result<String, Error> {
    let out = write_archive(mode, level, entries, rt, Vec::new())?;
    // Never leave a partial file under the requested name: write a
    // temporary of our own, then rename it over.
    let (tmp, mut file) = create_temporary(path)?;
    let written = file
        .write_all(&out)
        .map_err(|e| format!("writing {tmp}: {e}"))
        .and_then(|()| {
            drop(file);
            std::fs::rename(&tmp, path).map_err(|e| format!("renaming {tmp} to {path}: {e}"))
        });
    if let Err(e) = written {
        // A full disk leaves part of the archive behind: remove it (it is
        // ours: created here, never an existing file).
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    Ok(format!("ok out_bytes={}", out.len()))
}

/// Creates a new file beside `path` to write it through,
/// `{path}.{pid}-{n}.partial`, and returns its name: never an existing
/// file (which it would clobber), nor one another save, in this process or
/// another, is writing.
fn create_temporary(path: &str) -> Result<(String, File), Error> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let pid = std::process::id();
    // Only names left behind (by a killed run whose pid was reused) are
    // skipped, so a few tries suffice.
    for _ in 0..64 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = format!("{path}.{pid}-{n}.partial");
        match File::options().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("creating {tmp}: {e}").into()),
        }
    }
    Err(format!("no free temporary name beside {path}").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn talk(input: &[u8]) -> (Result<(), String>, String) {
        let mut out = Vec::new();
        let r = serve(&mut &input[..], &mut out).map_err(|e| e.to_string());
        (r, String::from_utf8(out).unwrap())
    }

    fn field(line: &str, key: &str) -> u64 {
        line.split(' ')
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {key} in {line:?}"))
            .parse()
            .unwrap()
    }

    #[test]
    fn loads_runs_and_answers_one_line_each() {
        let data = b"abcabcabcabcabcabcabcabcabcabcabcabcabcabcabc";
        let mut input = format!("load 2\n{} a b.txt\n", data.len()).into_bytes();
        input.extend_from_slice(data);
        input.extend_from_slice(b"0 empty\nrun sync 6\nrun async 1\n");
        let (r, out) = talk(&input);
        assert_eq!(r, Ok(()));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert_eq!(lines[0], protocol::HELLO);
        assert_eq!(lines[1], format!("ok entries=2 bytes={}", data.len()));
        for l in &lines[2..4] {
            // Two local headers, two central headers and the end record
            // hold the names at least twice: more than the data itself.
            assert!(field(l, "out_bytes") > 2 * 22 + 2 * 30, "{l}");
            assert!(field(l, "wall_ns") > 0, "{l}");
        }
    }

    #[test]
    fn a_bad_request_stops_the_peer() {
        // A level deflate does not have: refused, and nothing after it runs.
        let (r, out) = talk(b"run sync 11\nrun sync 6\n");
        assert!(r.unwrap_err().contains("level must be 0..=9"));
        assert_eq!(out.lines().count(), 1, "{out}");
    }

    #[test]
    fn an_endless_line_is_an_error_not_unbounded_memory() {
        let mut long = vec![b'x'; MAX_LINE + 10];
        let (r, _) = talk(&long);
        assert!(r.unwrap_err().contains("request line is longer than"));
        long.splice(0..0, b"load 1\n".iter().copied());
        let (r, _) = talk(&long);
        assert!(r.unwrap_err().contains("entry header is longer than"));
        // A line of exactly MAX_LINE bytes, newline included, is still read.
        let mut exact = b"0 ".to_vec();
        exact.resize(MAX_LINE - 1, b'n');
        exact.push(b'\n');
        exact.splice(0..0, b"load 1\n".iter().copied());
        let (r, out) = talk(&exact);
        assert_eq!(r, Ok(()));
        assert!(
            out.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("ok entries=1")),
            "{out}"
        );
    }

    #[test]
    fn a_short_entry_is_an_error_not_a_hang_or_panic() {
        let (r, _) = talk(b"load 1\n100 x\nshort");
        assert!(r.unwrap_err().contains("after 5 of 100 bytes"));
        let (r, _) = talk(b"load 2\n1 x\ny");
        assert!(r.unwrap_err().contains("before entry 1 of 2"));
    }

    /// A fresh directory for one test.
    fn scratch(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("szip-peer-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn listing(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_save_leaves_no_partial_file() {
        let dir = scratch("failed-save");
        // A directory where the archive should go: the write of the
        // temporary file succeeds, the rename over a directory fails.
        let path = dir.join("a.zip");
        std::fs::create_dir_all(path.join("inside")).unwrap();
        let input = format!("load 1\n1 x\nysave sync 6 {}\n", path.display());
        let (r, out) = talk(input.as_bytes());
        let left = listing(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(r, Ok(()));
        assert!(
            out.lines().nth(2).unwrap().starts_with("err renaming"),
            "{out}"
        );
        assert_eq!(left, ["a.zip"], "a temporary was left behind");
    }

    #[test]
    fn a_save_writes_through_its_own_temporary_and_clobbers_no_other_file() {
        let dir = scratch("own-temporary");
        let path = dir.join("a.zip");
        // The fixed name an earlier version used, holding someone's data.
        let partial = dir.join("a.zip.partial");
        std::fs::write(&partial, b"not ours").unwrap();
        let input = format!("load 1\n1 x\nysave sync 6 {}\n", path.display());
        let (r, out) = talk(input.as_bytes());
        assert_eq!(r, Ok(()));
        let saved = out.lines().nth(2).unwrap();
        assert_eq!(
            saved,
            format!("ok out_bytes={}", std::fs::metadata(&path).unwrap().len())
        );
        assert_eq!(std::fs::read(&partial).unwrap(), b"not ours");
        assert_eq!(listing(&dir), ["a.zip", "a.zip.partial"]);
        // Two saves to the same path at once write different temporaries.
        let p = path.to_str().unwrap();
        let (one, _f1) = create_temporary(p).unwrap();
        let (two, _f2) = create_temporary(p).unwrap();
        assert_ne!(one, two);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

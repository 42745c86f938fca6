//! The differential corpus's builders, shared by the test files: inputs
//! from fixed seeds and from this machine's files, and frames made by the
//! real zstd CLI and by libzstd.

#![allow(dead_code)] // each test file uses its own part

use std::io::Write;
use std::process::{Command, Stdio};

use zstd_safe::{CCtx, CParameter, DCtx};

pub const WINDOW_LIMIT: u64 = 1 << 31;
pub const ZSTD: &str = "/usr/bin/zstd";

/// Deterministic bytes (xorshift), incompressible.
pub fn random(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

/// Long runs of a few bytes, then short ones: RLE blocks and offset-1 matches.
pub fn runs(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut i = 0u32;
    while out.len() < len {
        let run = if i.is_multiple_of(7) {
            200_000
        } else {
            (i as usize * 37) % 300 + 1
        };
        out.extend(std::iter::repeat_n(
            (i % 5) as u8 * 50,
            run.min(len - out.len()),
        ));
        i += 1;
    }
    out
}

/// Up to `limit` bytes of the files under `dir` (sorted, recursively).
pub fn files_under(dir: &str, limit: usize, accept: &dyn Fn(&std::path::Path) -> bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(path) = stack.pop() {
        if out.len() >= limit {
            break;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            let Ok(entries) = std::fs::read_dir(&path) else {
                continue;
            };
            let mut entries: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            entries.reverse();
            stack.extend(entries);
        } else if meta.is_file()
            && accept(&path)
            && let Ok(bytes) = std::fs::read(&path)
        {
            out.extend_from_slice(&bytes[..bytes.len().min(limit - out.len())]);
        }
    }
    assert!(out.len() >= limit / 4, "too little data under {dir}");
    out
}

pub fn source_text(limit: usize) -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    files_under(root, limit, &|p| {
        p.extension().is_some_and(|e| e == "rs" || e == "md")
    })
}

pub fn binary(limit: usize) -> Vec<u8> {
    files_under("/usr/lib/x86_64-linux-gnu", limit, &|p| {
        p.to_string_lossy().contains(".so")
    })
}

pub fn docs(limit: usize) -> Vec<u8> {
    files_under("/usr/share/doc", limit, &|_| true)
}

pub fn compress_with(data: &[u8], params: &[CParameter]) -> Vec<u8> {
    let mut cctx = CCtx::create();
    for p in params {
        cctx.set_parameter(*p).expect("parameter");
    }
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    cctx.compress2(&mut out, data).expect("compress2");
    out
}

/// Streams `data` through libzstd without announcing its size: no
/// Frame_Content_Size, several flushes.
pub fn compress_streamed(data: &[u8], params: &[CParameter]) -> Vec<u8> {
    let mut cctx = CCtx::create();
    for p in params {
        cctx.set_parameter(*p).expect("parameter");
    }
    let mut out = vec![0u8; zstd_safe::compress_bound(data.len()) + 1024];
    let mut written = 0;
    for (i, piece) in data.chunks(100_000).enumerate() {
        let mut input = zstd_safe::InBuffer::around(piece);
        while input.pos() < piece.len() {
            let mut output = zstd_safe::OutBuffer::around_pos(&mut out[..], written);
            let directive = if i % 3 == 2 {
                zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_flush
            } else {
                zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_continue
            };
            cctx.compress_stream2(&mut output, &mut input, directive)
                .expect("stream");
            written = output.pos();
        }
    }
    loop {
        let mut input = zstd_safe::InBuffer::around(&[][..]);
        let mut output = zstd_safe::OutBuffer::around_pos(&mut out[..], written);
        let left = cctx
            .compress_stream2(
                &mut output,
                &mut input,
                zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end,
            )
            .expect("end");
        written = output.pos();
        if left == 0 {
            break;
        }
    }
    out.truncate(written);
    out
}

/// The zstd CLI on `data`, as a file (so the frame has its size) or, with
/// `stdin`, streamed.
pub fn cli(data: &[u8], args: &[&str], stdin: bool) -> Vec<u8> {
    let mut cmd = Command::new(ZSTD);
    cmd.args(args).arg("-q").arg("-c");
    // Numbered, not named by the arguments alone: two tests of this
    // process running the same arguments at once would remove each
    // other's input (seen: "zstd: can't stat .../in-19"). A file of its
    // own in the temporary directory, not in a folder per process, which
    // stayed behind empty after every run.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "zstdblock-test-{}-in-{call}-{}",
        std::process::id(),
        args.join("_").replace(['=', '-'], "")
    ));
    if stdin {
        cmd.stdin(Stdio::piped());
    } else {
        std::fs::write(&path, data).unwrap();
        cmd.arg(&path).stdin(Stdio::null());
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{ZSTD} is needed for this corpus: {e}"));
    if stdin {
        let mut pipe = child.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || pipe.write_all(&data).unwrap());
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "zstd {args:?} failed");
    let _ = std::fs::remove_file(&path);
    out.stdout
}

/// libzstd's one-shot decode (ZSTD_decompressDCtx) with room for `room` bytes.
pub fn libzstd(frame: &[u8], room: usize) -> Result<Vec<u8>, String> {
    let mut dctx = DCtx::create();
    let mut out = Vec::with_capacity(room);
    dctx.decompress(&mut out, frame)
        .map(|_| out)
        .map_err(|code| zstd_safe::get_error_name(code).to_owned())
}

//! The inputs every case starts from: made the same way in every run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

/// The fixed time every input file and folder gets, so archives and
/// listings of them are the same in every run (2024-01-02 03:04:05 UTC).
pub(super) const INPUT_TIME: u64 = 1_704_164_645;

/// Deterministic bytes: a 64-bit LCG's high bytes.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

/// Text lines that compress well but not trivially.
fn text(lines: usize, seed: usize) -> String {
    const WORDS: [&str; 8] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    (0..lines)
        .map(|i| {
            format!(
                "{i:05} {} {} {}\n",
                WORDS[(i * 7 + seed) % 8],
                WORDS[(i * 3 + seed) % 8],
                i * seed % 1013
            )
        })
        .collect()
}

/// A FIX message with its BodyLength (9) and CheckSum (10) computed, its
/// fields separated by `sep`.
pub(super) fn fix_message(begin: &str, fields: &[(u32, &str)], sep: u8) -> Vec<u8> {
    let body: Vec<u8> = fields
        .iter()
        .flat_map(|(t, v)| {
            let mut f = format!("{t}={v}").into_bytes();
            f.push(sep);
            f
        })
        .collect();
    let mut m = format!("8={begin}").into_bytes();
    m.push(sep);
    m.extend(format!("9={}", body.len()).into_bytes());
    m.push(sep);
    m.extend(&body);
    // The checksum is over the SOH form, whatever separator is written.
    let soh: u32 = m
        .iter()
        .map(|&b| u32::from(if b == sep { 1 } else { b }))
        .sum();
    m.extend(format!("10={:03}", soh % 256).into_bytes());
    m.push(sep);
    m
}

/// Valid and invalid FIX messages, each ending in `sep`.
fn fix_messages(sep: u8) -> Vec<u8> {
    let t = "20240102-03:04:05.000";
    let mut all = Vec::new();
    let logon: &[(u32, &str)] = &[
        (35, "A"),
        (49, "CLIENT"),
        (56, "SERVER"),
        (34, "1"),
        (52, t),
        (98, "0"),
        (108, "30"),
    ];
    let order: &[(u32, &str)] = &[
        (35, "D"),
        (49, "CLIENT"),
        (56, "SERVER"),
        (34, "2"),
        (52, t),
        (11, "ord-1"),
        (55, "ABC"),
        (54, "1"),
        (38, "100"),
        (40, "2"),
        (44, "10.25"),
        (60, t),
    ];
    let beat: &[(u32, &str)] = &[
        (35, "0"),
        (49, "CLIENT"),
        (56, "SERVER"),
        (34, "3"),
        (52, t),
    ];
    for (i, m) in [logon, order, beat].into_iter().enumerate() {
        let mut bytes = fix_message("FIX.4.4", m, sep);
        if i == 1 {
            // A second copy of the order with its checksum one off.
            let mut bad = bytes.clone();
            let n = bad.len();
            bad[n - 2] = if bad[n - 2] == b'9' {
                b'0'
            } else {
                bad[n - 2] + 1
            };
            bytes.extend(&bad);
        }
        all.extend(bytes);
    }
    // Not a message: no BodyLength.
    all.extend(format!("8=FIX.4.4{0}35=0{0}10=000{0}", sep as char).into_bytes());
    all
}

/// Runs `bin` with `args` in `dir`, failing unless it succeeds.
fn make_with(bin: &Path, dir: &Path, args: &[&str]) -> Result<()> {
    let status = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("starting {}", bin.display()))?;
    if !status.success() {
        bail!(
            "making the inputs: perfkit {} failed: {status}",
            args.join(" ")
        );
    }
    Ok(())
}

/// Lays out the inputs every case starts from in `dir`; `bin` (the work
/// tree's binary) makes those only perfkit makes.
pub(super) fn make_inputs(dir: &Path, bin: &Path, root: &Path) -> Result<()> {
    std::fs::create_dir_all(dir.join("tree/sub/deeper"))?;
    let w = |p: &str, b: &[u8]| std::fs::write(dir.join(p), b);
    w("tree/a.txt", text(3000, 1).as_bytes())?;
    w("tree/b.bin", &noise(70_000, 2))?;
    w("tree/sub/c.txt", text(40, 3).as_bytes())?;
    w("tree/sub/d.bin", &noise(300, 4))?;
    w("tree/sub/deeper/e.txt", b"a short file\n")?;
    w("tree/empty", b"")?;
    w("one.txt", text(2000, 5).as_bytes())?;
    w("two.bin", &noise(20_000, 6))?;
    w("msgs.soh", &fix_messages(1))?;
    let mut lines = fix_messages(b'|');
    // The | form is one message a line.
    let mut i = 0;
    while let Some(p) = lines[i..].windows(4).position(|w| w == b"|10=") {
        let end = i + p + 8;
        lines.insert(end, b'\n');
        i = end + 1;
    }
    w("msgs.psv", &lines)?;
    let hlogs = root.join("crates/report/fuzz/seeds/hlog_merge");
    for name in ["relative", "basetime", "plain-v2", "absolute-early"] {
        std::fs::copy(hlogs.join(name), dir.join(format!("{name}.hlog")))
            .with_context(|| format!("copying {}", hlogs.join(name).display()))?;
    }
    set_times(dir)?;
    let mk = |args: &[&str]| make_with(bin, dir, args);
    mk(&["zip", "-r", "-q", "ref.zip", "tree"])?;
    mk(&["compress", "-q", "one.txt", "-o", "a.zst"])?;
    let zst = std::fs::read(dir.join("a.zst"))?;
    w("cut.zst", &zst[..zst.len() / 2])?;
    let zip = std::fs::read(dir.join("ref.zip"))?;
    w("cut.zip", &zip[..zip.len() - 30])?;
    mk(&[
        "betree",
        "gen-exprs",
        "--params",
        "12",
        "--count",
        "300",
        "-o",
        "exprs.txt",
    ])?;
    mk(&[
        "betree",
        "gen-events",
        "--params",
        "12",
        "--count",
        "200",
        "-o",
        "events.txt",
    ])?;
    mk(&[
        "betree",
        "gen-exprs",
        "--profile",
        "adtech",
        "--count",
        "50",
        "-o",
        "ad.exprs",
    ])?;
    mk(&[
        "betree",
        "gen-events",
        "--profile",
        "adtech",
        "--count",
        "20",
        "-o",
        "ad.json",
    ])?;
    let events = std::fs::read_to_string(dir.join("ad.json"))?;
    let mut bad: String = events.lines().take(3).map(|l| format!("{l}\n")).collect();
    bad.push_str("{\"age\": 30, not json\n");
    w("ad-bad.json", bad.as_bytes())?;
    // An event line that is not UTF-8, mid-stream (fa6637d's message).
    let mut utf8: Vec<u8> = events
        .lines()
        .take(2)
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    utf8.extend(b"{\"age\": \"\xff\xfe\"}\n");
    w("ad-utf8.json", &utf8)?;
    mk(&[
        "betree",
        "search",
        "--exprs",
        "exprs.txt",
        "--events",
        "events.txt",
        "-o",
        "s1.out",
    ])?;
    let s1 = std::fs::read_to_string(dir.join("s1.out"))?;
    let mut s2: Vec<String> = s1.lines().map(str::to_owned).collect();
    if let Some(l) = s2.get_mut(5) {
        l.push_str(" 999");
    }
    w("s2.out", (s2.join("\n") + "\n").as_bytes())?;
    set_times(dir)
}

/// Gives every file and folder under `dir` (and `dir`) [`INPUT_TIME`].
pub(super) fn set_times(dir: &Path) -> Result<()> {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(INPUT_TIME);
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            set_times(&p)?;
        } else {
            std::fs::File::options()
                .write(true)
                .open(&p)?
                .set_modified(t)?;
        }
    }
    // Folders last: setting a child's time leaves the folder's alone, but
    // making the child did not.
    std::fs::File::open(dir)?
        .set_modified(t)
        .with_context(|| format!("setting the time of {}", dir.display()))
}

/// Copies `from` to `to` (files and folders, modes kept).
pub(super) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dst = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else {
            std::fs::copy(e.path(), &dst)?;
        }
    }
    Ok(())
}

//! The two small files beside the messages: `.seqnums` (the next numbers)
//! and `.session` (the creation time), read in every form QuickFIX
//! writes, and replaced whole through a rename.

use std::path::Path;

use super::{MAX_SEQ, Part};
use crate::store::{Durability, StoreError};

/// `%010d : %010d`, refusing what 1.15.1 could not read back.
pub(super) fn seqnums_text(sender: u64, target: u64) -> Result<String, StoreError> {
    for n in [sender, target] {
        if n > MAX_SEQ {
            return Err(StoreError::OutOfRange { seq: n });
        }
    }
    Ok(format!("{sender:010} : {target:010}"))
}

/// Now as `YYYYMMDD-HH:MM:SS`, QuickFIX's creation-time format.
pub(super) fn creation_stamp() -> String {
    let now = fixcore::value::UtcTimestamp::now();
    let mut b = [0u8; 32];
    let n = fixcore::build::format::timestamp(&mut b, now, fixcore::build::TimePrecision::Seconds)
        .unwrap_or(0);
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// The `.seqnums` numbers: `Ok(Err(..))` when the file is damaged (for
/// recovery to decide), (1, 1) when it is empty.
pub(super) fn read_seqnums(part: &Part) -> Result<Result<(u64, u64), StoreError>, StoreError> {
    let len = part.len()?;
    if len == 0 {
        return Ok(Ok((1, 1)));
    }
    let bad = |why: &str| {
        Ok(Err(part.corrupt(
            0,
            "the sequence numbers".into(),
            why.to_string(),
        )))
    };
    if len > 64 {
        return bad("longer than two numbers");
    }
    let mut b = vec![0u8; len as usize];
    let n = part.read_at(&mut b, 0)?;
    b.truncate(n);
    let Ok(text) = std::str::from_utf8(&b) else {
        return bad("not text");
    };
    let Some((s, t)) = text.trim().split_once(':') else {
        return bad("no ':' between the two numbers");
    };
    let num = |v: &str| fixcore::value::parse_uint(v.trim().as_bytes()).filter(|&n| n > 0);
    match (num(s), num(t)) {
        (Some(s), Some(t)) if s <= MAX_SEQ && t <= MAX_SEQ => Ok(Ok((s, t))),
        (Some(_), Some(_)) => bad("a number above 2147483647"),
        _ => bad("not two positive numbers"),
    }
}

/// The `.session` creation time: `Ok(Ok(None))` when the file is empty,
/// `Ok(Err(..))` when it holds no creation time (for recovery to
/// decide).
pub(super) fn read_session(part: &Part) -> Result<Result<Option<String>, StoreError>, StoreError> {
    let len = part.len()?;
    if len == 0 {
        return Ok(Ok(None));
    }
    let mut b = vec![0u8; len.min(64) as usize];
    let n = part.read_at(&mut b, 0)?;
    b.truncate(n);
    let text = String::from_utf8_lossy(&b).trim().to_string();
    if len > 64 || !is_creation_time(text.as_bytes()) {
        return Ok(Err(part.corrupt(
            0,
            "the creation time".into(),
            "not a YYYYMMDD-HH:MM:SS[.sss] time".into(),
        )));
    }
    Ok(Ok(Some(text)))
}

/// Whether `t` is a creation time as QuickFIX writes and reads them:
/// `YYYYMMDD-HH:MM:SS`, then nothing or `.` and 1 to 9 digits
/// (QuickFIX/C++ 1.15.1 writes seconds; later versions and QuickFIX/J
/// write milliseconds). Any year of four digits, so a far-future time
/// (`29991231-23:59:59`), which QuickFIX reads, is one too: unlike a
/// SendingTime it is never turned into nanoseconds.
pub(super) fn is_creation_time(t: &[u8]) -> bool {
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = t.get(r)?;
        if !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(s.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')))
    };
    if t.len() < 17 || t[8] != b'-' || t[11] != b':' || t[14] != b':' {
        return false;
    }
    let fields = (
        digits(0..4),
        digits(4..6),
        digits(6..8),
        digits(9..11),
        digits(12..14),
        digits(15..17),
    );
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) = fields else {
        return false;
    };
    let date_ok = (1..=12).contains(&mo) && d >= 1 && d <= civil::days_in_month(i64::from(y), mo);
    let frac_ok = match &t[17..] {
        [] => true,
        [b'.', rest @ ..] => (1..=9).contains(&rest.len()) && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    date_ok && h <= 23 && mi <= 59 && s <= 60 && frac_ok
}

/// Replaces the file at `path` with `bytes` whole: written to a sibling
/// and renamed over it, so a death midway leaves the old file or the new
/// one, never a mix (with [`Durability::Fsync`] the new file and the
/// directory reach the disk before this returns).
pub(super) fn write_whole(
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<(), StoreError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let io = |path: &Path, op| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, op, source }
    };
    {
        let f = std::fs::File::create(&tmp).map_err(io(&tmp, "create"))?;
        std::io::Write::write_all(&mut &f, bytes).map_err(io(&tmp, "write"))?;
        if durability == Durability::Fsync {
            f.sync_all().map_err(io(&tmp, "fsync"))?;
        }
    }
    std::fs::rename(&tmp, path).map_err(io(&tmp, "rename"))?;
    if durability == Durability::Fsync
        && let Some(dir) = path.parent()
    {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(dir, "fsync"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_creation_time;

    /// Every form QuickFIX writes or reads, and what none of them is.
    #[test]
    fn creation_times() {
        for good in [
            "20261126-01:02:03",
            "20261126-01:02:03.456",
            "20261126-01:02:03.456789",
            "20261126-01:02:03.456789123",
            "20261126-01:02:03.4",
            "29991231-23:59:59",
            "99991231-23:59:59.999",
            "00010101-00:00:00",
            "20240229-12:00:00",
            "20261126-23:59:60",
        ] {
            assert!(is_creation_time(good.as_bytes()), "{good}");
        }
        for bad in [
            "",
            "2026112601:02:03",
            "20261126-01:02",
            "20261126-24:00:00",
            "20261126-01:60:00",
            "20261126-01:02:61",
            "20261326-01:02:03",
            "20230229-01:02:03",
            "20261100-01:02:03",
            "20261126-01:02:03.",
            "20261126-01:02:03.1234567890",
            "20261126-01:02:03Z",
            "2026x126-01:02:03",
            "20261126-01:02:03 trailing",
        ] {
            assert!(!is_creation_time(bad.as_bytes()), "{bad}");
        }
    }
}

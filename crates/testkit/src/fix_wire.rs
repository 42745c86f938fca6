//! FIX on the wire as the tests' oracle side writes it, independently of
//! fixcore: UTCTimestamp text by civil-date arithmetic, framing with
//! BodyLength and CheckSum counted here, and QuickFIX's own data
//! dictionaries (fetched once) for the tests that load them.

use std::path::PathBuf;
use std::process::Command;

/// The `spec/` folder of QuickFIX 1.15.1's source package from PyPI,
/// fetched once with pip and cached under `target/` (never committed).
/// When pip cannot get it the calling test fails, unless
/// `PERFKIT_SKIP_INTEROP=1`, where it is skipped (`None`) saying why.
pub fn quickfix_spec() -> Option<PathBuf> {
    let cache = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/quickfix-spec");
    let spec = cache.join("quickfix-1.15.1/spec");
    if spec.join("FIX44.xml").is_file() {
        return Some(spec);
    }
    std::fs::create_dir_all(&cache).unwrap();
    let got = Command::new("pip")
        .args([
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "quickfix==1.15.1",
            "-d",
        ])
        .arg(&cache)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("tar")
            .current_dir(&cache)
            .args([
                "xzf",
                "quickfix-1.15.1.tar.gz",
                "--wildcards",
                "*/spec/*.xml",
            ])
            .status()
            .is_ok_and(|s| s.success());
    if got {
        return Some(spec);
    }
    crate::interop::available(
        false,
        "QuickFIX 1.15.1's dictionaries",
        "pip download quickfix==1.15.1 failed; pip and network access fetch them",
    );
    None
}

/// `YYYYMMDD-HH:MM:SS.sss` for a time in nanoseconds since the epoch.
pub fn timestamp(nanos: i64) -> String {
    let secs = nanos.div_euclid(1_000_000_000);
    let ms = nanos.rem_euclid(1_000_000_000) / 1_000_000;
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}:{:02}:{:02}.{ms:03}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// Reads one message from `s` (up to and including `10=xxx` and SOH), a
/// byte at a time so nothing of the next message is taken, as its
/// `tag=value` fields; `None` once the peer closed. A read error panics:
/// the tests using it set a read timeout as their bound.
pub fn read_message(s: &mut impl std::io::Read) -> Option<Vec<String>> {
    let mut bytes = Vec::new();
    let mut b = [0u8; 1];
    loop {
        match s.read(&mut b) {
            Ok(0) => return None,
            Ok(_) => bytes.push(b[0]),
            Err(e) => panic!("read: {e}"),
        }
        if b[0] == 1 {
            let text = String::from_utf8_lossy(&bytes);
            let fields: Vec<String> = text
                .trim_end_matches('\x01')
                .split('\x01')
                .map(str::to_owned)
                .collect();
            if fields.last().is_some_and(|f| f.starts_with("10=")) {
                return Some(fields);
            }
        }
    }
}

/// Whether `fields` (as [`read_message`] returns them) hold `field`
/// (`tag=value`) exactly.
pub fn has(fields: &[String], field: &str) -> bool {
    fields.iter().any(|x| x == field)
}

/// A FIX.4.4 message from `|`-separated fields after BeginString, each
/// `NOW` replaced by the current time (for SendingTime), framed by
/// [`frame`].
pub fn frame_now(fields: &str) -> Vec<u8> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    frame(&format!(
        "8=FIX.4.4|{}",
        fields.replace("NOW", &timestamp(nanos))
    ))
}

/// A complete message from `|`-separated fields, BeginString first:
/// BodyLength after it and CheckSum at the end are added here.
pub fn frame(fields: &str) -> Vec<u8> {
    let mut parts = fields.split('|').filter(|f| !f.is_empty());
    let begin = parts.next().expect("a BeginString field");
    let body: String = parts.map(|p| format!("{p}\x01")).collect();
    let mut msg = format!("{begin}\x019={}\x01{body}", body.len()).into_bytes();
    let sum: u32 = msg.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
    msg.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    msg
}

/// A connection to an engine's port on 127.0.0.1, retried for up to 30 s
/// while the process starts listening, with a 20 s read timeout so a
/// silent engine fails the test instead of hanging it.
pub fn connect(port: u16) -> std::net::TcpStream {
    use std::time::{Duration, Instant};
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => {
                s.set_read_timeout(Some(Duration::from_secs(20)))
                    .expect("a read timeout");
                return s;
            }
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("the engine never listened on port {port}: {e}"),
        }
    }
}

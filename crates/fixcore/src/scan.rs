//! Whole-message structural indexing: one pass that records the position of
//! every `=` and SOH (0x01) byte of a message.
//!
//! FIX fields average ~10 bytes, so searching for "the next delimiter" one call
//! at a time (memchr-style) pays a setup cost per field that exceeds the work.
//! Instead every path here classifies a whole block (64 bytes with AVX-512,
//! 32 with AVX2) into a bit mask and turns the mask into positions without a
//! per-field function call. The parser then walks the position list, in
//! the variant that marks each SOH position with a flag bit so that it can
//! tell the two delimiters apart without loading the bytes again.
//!
//! The path is chosen at run time ([`ScanPath::detect`]), once per process.
//! An application may cap it first with [`ScanPath::cap`] (it never enables
//! an instruction set the CPU lacks); `perfkit` does so from its
//! `FIXCORE_SCAN` variable, to benchmark each path. The library itself
//! reads no environment, except with the `scan-cap-env` feature, which test
//! runs turn on so that the whole suite runs once per path with
//! `FIXCORE_SCAN=scalar`, `avx2`, `avx512` or `avx512vbmi2` (`cargo xtask
//! ci` does).

use crate::{Error, Result};
use std::sync::OnceLock;

mod positions;
mod x86;

pub use positions::Positions;

/// The SOH field separator (0x01).
pub const SOH: u8 = 0x01;

/// Slack the SIMD paths need past the last written position: they store whole
/// vectors and only then advance the count.
const SLACK: usize = 80;

/// Set by [`scan_tagged`] on the position of each SOH (clear on each `=`),
/// so the parser tells delimiters apart without loading the bytes again.
pub(crate) const SOH_FLAG: u32 = 1 << 31;

/// One implementation of the structural scan. Ordered from slowest to fastest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScanPath {
    /// Portable byte loop (branch-free write, advance on match).
    Scalar,
    /// 32-byte blocks, `vpmovmskb` mask, unrolled bit extraction.
    Avx2,
    /// 64-byte blocks, mask registers, `vpcompressd` per 16-byte quarter.
    Avx512,
    /// 64-byte blocks, one `vpcompressb` (AVX-512 VBMI2) per block, widened.
    Avx512Vbmi2,
}

impl ScanPath {
    /// Every path, slowest first.
    pub const ALL: [ScanPath; 4] = [
        ScanPath::Scalar,
        ScanPath::Avx2,
        ScanPath::Avx512,
        ScanPath::Avx512Vbmi2,
    ];

    /// Short lowercase name, as accepted by `FIXCORE_SCAN`.
    pub fn name(self) -> &'static str {
        match self {
            ScanPath::Scalar => "scalar",
            ScanPath::Avx2 => "avx2",
            ScanPath::Avx512 => "avx512",
            ScanPath::Avx512Vbmi2 => "avx512vbmi2",
        }
    }

    /// Parses a name as printed by [`ScanPath::name`].
    pub fn from_name(name: &str) -> Option<ScanPath> {
        ScanPath::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this CPU can run the path.
    pub fn is_available(self) -> bool {
        match self {
            ScanPath::Scalar => true,
            ScanPath::Avx2 => x86::has_avx2(),
            ScanPath::Avx512 => x86::has_avx512(),
            ScanPath::Avx512Vbmi2 => x86::has_avx512_vbmi2(),
        }
    }

    /// Every path this CPU can run, slowest first (ignores any cap).
    pub fn available() -> Vec<ScanPath> {
        ScanPath::ALL
            .into_iter()
            .filter(|p| p.is_available())
            .collect()
    }

    /// The fastest path this CPU can run.
    fn best() -> ScanPath {
        ScanPath::ALL
            .into_iter()
            .rev()
            .find(|p| p.is_available())
            .unwrap_or(ScanPath::Scalar)
    }

    /// Caps the path [`ScanPath::detect`] picks at `cap`, for the rest of
    /// the process. The pick is made once, at the first scan, so call this
    /// before anything is scanned. Returns the path now in use: `Ok` with
    /// the capped pick, or `Err` with the path an earlier scan already
    /// fixed when that one differs.
    pub fn cap(cap: ScanPath) -> std::result::Result<ScanPath, ScanPath> {
        let want = ScanPath::best().min(cap);
        let got = *DETECTED.get_or_init(|| want);
        if got == want { Ok(got) } else { Err(got) }
    }

    /// The fastest available path, or the capped one after
    /// [`ScanPath::cap`]. Computed once per process.
    pub fn detect() -> ScanPath {
        *DETECTED.get_or_init(|| {
            let best = ScanPath::best();
            #[cfg(feature = "scan-cap-env")]
            if let Some(cap) = env_cap(std::env::var_os("FIXCORE_SCAN").as_deref()) {
                return best.min(cap);
            }
            best
        })
    }
}

/// Why [`ScanPath::cap_from_env`] refused `FIXCORE_SCAN`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapError {
    /// The value (as given, lossily decoded) names no scan path.
    #[error("FIXCORE_SCAN='{0}' names no scan path (expected scalar, avx2, avx512 or avx512vbmi2)")]
    UnknownName(String),
    /// An earlier scan in this process already fixed another path.
    #[error(
        "FIXCORE_SCAN={}: the scan path was already fixed at {}",
        asked.name(),
        in_use.name()
    )]
    AlreadyFixed {
        /// The path `FIXCORE_SCAN` asked for.
        asked: ScanPath,
        /// The path in use.
        in_use: ScanPath,
    },
}

impl ScanPath {
    /// Applies `FIXCORE_SCAN` (`scalar`, `avx2`, `avx512` or
    /// `avx512vbmi2`) through [`ScanPath::cap`], so a program can let its
    /// user benchmark and check each path. Unset or empty caps nothing
    /// (`Ok(None)`); a value naming no path is an error, so a typo cannot
    /// quietly measure the fastest path instead of the one asked for.
    ///
    /// ```
    /// // Unset in doc tests: nothing is capped.
    /// # if std::env::var_os("FIXCORE_SCAN").is_none() {
    /// assert_eq!(fixcore::scan::ScanPath::cap_from_env(), Ok(None));
    /// # }
    /// ```
    pub fn cap_from_env() -> std::result::Result<Option<ScanPath>, CapError> {
        let Some(raw) = std::env::var_os("FIXCORE_SCAN").filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        let Some(asked) = raw.to_str().and_then(ScanPath::from_name) else {
            return Err(CapError::UnknownName(raw.to_string_lossy().into_owned()));
        };
        ScanPath::cap(asked)
            .map(Some)
            .map_err(|in_use| CapError::AlreadyFixed { asked, in_use })
    }
}

/// The path every scan without an explicit one uses, fixed at the first.
static DETECTED: OnceLock<ScanPath> = OnceLock::new();

/// The `scan-cap-env` feature's cap: `FIXCORE_SCAN`'s value, `None` when
/// unset or empty. A value naming no path panics: the feature is for test
/// runs, where a typo must fail the run instead of quietly testing the
/// fastest path.
#[cfg(any(test, feature = "scan-cap-env"))]
fn env_cap(value: Option<&std::ffi::OsStr>) -> Option<ScanPath> {
    let raw = value.filter(|v| !v.is_empty())?;
    match raw.to_str().and_then(ScanPath::from_name) {
        Some(p) => Some(p),
        None => panic!(
            "FIXCORE_SCAN={:?} names no scan path (expected scalar, avx2, avx512 or avx512vbmi2)",
            raw.to_string_lossy()
        ),
    }
}

/// Records into `out` (cleared first) the offset of every `=` and SOH in
/// `msg`, ascending, using the run-time selected path.
///
/// `out` keeps its capacity, so a reused one makes this allocation-free.
pub fn scan_into(msg: &[u8], out: &mut Positions) -> Result<()> {
    scan_with(ScanPath::detect(), msg, out)
}

/// [`scan_into`] with an explicit path. Fails with
/// [`Error::ScanPathUnavailable`] if the CPU cannot run `path`.
#[inline]
pub fn scan_with(path: ScanPath, msg: &[u8], out: &mut Positions) -> Result<()> {
    scan_impl::<false, false>(path, msg, out).map(|_| ())
}

/// [`scan_with`] that also returns the sum of all bytes, computed in the
/// same pass (the parser derives the CheckSum from it).
pub fn scan_and_sum(path: ScanPath, msg: &[u8], out: &mut Positions) -> Result<u64> {
    scan_impl::<true, false>(path, msg, out)
}

/// [`scan_and_sum`] with [`SOH_FLAG`] set on the positions of SOH bytes.
/// Takes messages shorter than 2 GiB (less [`SLACK`]), so positions leave
/// the flag bit free.
pub(crate) fn scan_tagged(path: ScanPath, msg: &[u8], out: &mut Positions) -> Result<u64> {
    scan_impl::<true, true>(path, msg, out)
}

/// The scan on `path`; `SUM` asks for the byte sum too (0 without), `TAG`
/// for [`SOH_FLAG`] on SOH positions.
#[inline(always)]
fn scan_impl<const SUM: bool, const TAG: bool>(
    path: ScanPath,
    msg: &[u8],
    out: &mut Positions,
) -> Result<u64> {
    let limit = if TAG { SOH_FLAG } else { u32::MAX } as usize - SLACK;
    if msg.len() > limit {
        return Err(Error::TooLarge {
            len: msg.len(),
            limit,
        });
    }
    let spare = out.clear_for(msg.len() + SLACK);
    let n = match path {
        ScanPath::Scalar => Some(scalar::<SUM, TAG>(msg, spare)),
        ScanPath::Avx2 => x86::avx2::<SUM, TAG>(msg, spare),
        ScanPath::Avx512 => x86::avx512::<SUM, TAG>(msg, spare),
        ScanPath::Avx512Vbmi2 => x86::avx512_vbmi2::<SUM, TAG>(msg, spare),
    };
    let Some((n, total)) = n else {
        return Err(Error::ScanPathUnavailable { path: path.name() });
    };
    debug_assert!(n <= msg.len());
    // SAFETY: every path initialised the first `n` elements of `spare`
    // (and possibly more, which stay beyond `len`), and `n <= msg.len()`,
    // less than the capacity `clear_for` made.
    unsafe { out.set_len(n) };
    Ok(total)
}

/// Makes every `|` of `block` an SOH, as the `|` form of a message is read
/// ([`crate::input`]), and appends the offset (plus `base`) of each line
/// break of `block` to `breaks`, in order: the line ends of a read's lines
/// come from the pass that maps them, where a search per line was a
/// twelfth of `fix check`'s time on a FIX 4.2/4.4/5.0 mix. A select per
/// byte and a compare, with AVX2 when the scan path allows it; a cap on
/// the scan path ([`ScanPath::cap`]) caps this too, so each path's run
/// tests its loop.
pub(crate) fn bars_to_soh(block: &mut [u8], base: usize, breaks: &mut Vec<usize>) {
    if ScanPath::detect() < ScanPath::Avx2 || !x86::bars_to_soh(block, base, breaks) {
        bars_to_soh_portable(block, base, breaks);
    }
}

/// [`bars_to_soh`] in portable code: the select, which the compiler
/// vectorises, then memchr's search for the breaks.
fn bars_to_soh_portable(block: &mut [u8], base: usize, breaks: &mut Vec<usize>) {
    for b in block.iter_mut() {
        *b = if *b == b'|' { SOH } else { *b };
    }
    breaks.extend(memchr::memchr_iter(b'\n', block).map(|i| base + i));
}

/// How many bytes of `bytes` are `byte` (line breaks, for the lines of an
/// input): per-lane byte counters, emptied before they can wrap, which
/// the compiler vectorises, with AVX2 when the scan path allows it (a
/// count by mask and popcount, 32 bytes at a time, was a thirtieth of
/// `fix check`'s time on a log).
pub(crate) fn count_byte(bytes: &[u8], byte: u8) -> usize {
    match ScanPath::detect() >= ScanPath::Avx2 {
        true => x86::count_byte(bytes, byte).unwrap_or_else(|| count_byte_portable(bytes, byte)),
        false => count_byte_portable(bytes, byte),
    }
}

/// [`count_byte`] in portable code.
#[inline(always)]
fn count_byte_portable(bytes: &[u8], byte: u8) -> usize {
    const LANES: usize = 64;
    let mut total = 0;
    // 255 rounds at most, so no lane passes 255.
    for part in bytes.chunks(255 * LANES) {
        let mut lanes = [0u8; LANES];
        let mut blocks = part.chunks_exact(LANES);
        for block in &mut blocks {
            for (n, &b) in lanes.iter_mut().zip(block) {
                *n += u8::from(b == byte);
            }
        }
        total += lanes.iter().map(|&n| usize::from(n)).sum::<usize>();
        total += blocks.remainder().iter().filter(|&&b| b == byte).count();
    }
    total
}

/// The plain loop: write the index unconditionally and advance the cursor by
/// whether the byte is a delimiter, so there is no data-dependent branch.
fn scalar<const SUM: bool, const TAG: bool>(
    msg: &[u8],
    out: &mut [std::mem::MaybeUninit<u32>],
) -> (usize, u64) {
    let mut n = 0;
    for (i, &b) in msg.iter().enumerate() {
        let flag = if TAG { u32::from(b == SOH) << 31 } else { 0 };
        out[n].write(i as u32 | flag);
        n += usize::from(b == b'=' || b == SOH);
    }
    let total = if SUM {
        msg.iter().map(|&b| u64::from(b)).sum()
    } else {
        0
    };
    (n, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Oracle: the obvious filter, independent of every path above.
    fn model(msg: &[u8]) -> Vec<u32> {
        msg.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'=' || **b == SOH)
            .map(|(i, _)| i as u32)
            .collect()
    }

    fn check_all(msg: &[u8]) {
        let want = model(msg);
        let want_tagged: Vec<u32> = msg
            .iter()
            .enumerate()
            .filter_map(|(i, &b)| match b {
                b'=' => Some(i as u32),
                SOH => Some(i as u32 + (1 << 31)),
                _ => None,
            })
            .collect();
        let mut out = Positions::new();
        let want_sum: u64 = msg.iter().map(|&b| u64::from(b)).sum();
        for path in ScanPath::available() {
            scan_with(path, msg, &mut out).unwrap();
            assert_eq!(*out, want, "path {path:?} on {msg:?}");
            let s = scan_and_sum(path, msg, &mut out).unwrap();
            assert_eq!(*out, want, "path {path:?} with sum on {msg:?}");
            assert_eq!(s, want_sum, "sum on path {path:?}");
            let s = scan_tagged(path, msg, &mut out).unwrap();
            assert_eq!(*out, want_tagged, "path {path:?} tagged on {msg:?}");
            assert_eq!(s, want_sum, "tagged sum on path {path:?}");
        }
        scan_into(msg, &mut out).unwrap();
        assert_eq!(*out, want, "detected path");
    }

    const NOS: &[u8] = b"8=FIX.4.4\x019=148\x0135=D\x0134=1080\x0149=TESTBUY1\x0152=20180920-18:14:19.508\x0156=TESTSELL1\x0111=636730640278898634\x0115=USD\x0121=2\x0138=7000\x0140=1\x0154=1\x0155=MSFT\x0160=20180920-18:14:19.492\x01100=NYSE\x01167=CS\x0110=092\x01";

    #[test]
    fn real_message_every_prefix_and_offset() {
        for end in 0..=NOS.len() {
            check_all(&NOS[..end]);
        }
        // Same message at every start alignment inside a larger buffer.
        let mut buf = vec![b'x'; 200];
        for off in 0..70 {
            buf.truncate(off);
            buf.extend_from_slice(NOS);
            check_all(&buf[off..]);
        }
    }

    #[test]
    fn delimiter_at_every_alignment() {
        for len in 0..200 {
            for pos in 0..len {
                let mut v = vec![b'a'; len];
                v[pos] = SOH;
                check_all(&v);
                v[pos] = b'=';
                check_all(&v);
            }
        }
        // All delimiters: exercises the widest compress / bit-extract paths.
        check_all(&[SOH; 257]);
        check_all(&[b'='; 300]);
    }

    /// Every `|` and nothing else becomes SOH, and every line break is
    /// listed in order, at every length and alignment the vector loop
    /// meets (heads, whole vectors, tails), after breaks already listed.
    #[test]
    fn bars_become_soh_and_nothing_else_changes() {
        let bytes: Vec<u8> = (0..700u32)
            .map(|i| b"|a=\x01|\n|\xff"[(i * 7 % 8) as usize])
            .collect();
        for start in 0..40 {
            for len in [0, 1, 15, 16, 31, 32, 33, 63, 64, 65, 200, 600] {
                let mut got = bytes[start..start + len].to_vec();
                let mut breaks = vec![7];
                bars_to_soh(&mut got, 1000, &mut breaks);
                let want: Vec<u8> = bytes[start..start + len]
                    .iter()
                    .map(|&b| if b == b'|' { 1 } else { b })
                    .collect();
                assert_eq!(got, want, "from {start}, {len} bytes");
                let want: Vec<usize> = std::iter::once(7)
                    .chain(
                        (0..len)
                            .filter(|&i| bytes[start + i] == b'\n')
                            .map(|i| 1000 + i),
                    )
                    .collect();
                assert_eq!(breaks, want, "from {start}, {len} bytes");
            }
        }
        // A break in every byte of a vector and none in the next.
        let mut block = [b'\n'; 32]
            .into_iter()
            .chain([b'|'; 40])
            .collect::<Vec<u8>>();
        let mut breaks = Vec::new();
        bars_to_soh(&mut block, 0, &mut breaks);
        assert_eq!(breaks, (0..32).collect::<Vec<usize>>());
        assert!(block[32..].iter().all(|&b| b == 1));
    }

    /// Counts as a filter counts, at lengths around the vectors and past
    /// the 255 rounds after which the lane counters are emptied, with the
    /// byte in every lane of every round (the counters' worst case).
    #[test]
    fn bytes_are_counted_as_a_filter_counts_them() {
        let mut bytes: Vec<u8> = (0..40_000u32)
            .map(|i| [b'\n', b'a', 1, b'\n', 0xff][(i % 5) as usize])
            .collect();
        bytes.extend(std::iter::repeat_n(b'\n', 255 * 64 * 2 + 3));
        for len in [
            0,
            1,
            63,
            64,
            65,
            255 * 64 - 1,
            255 * 64,
            255 * 64 + 1,
            40_000,
            bytes.len(),
        ] {
            for start in [0, 1, 17] {
                let part = &bytes[start..len.max(start)];
                let want = part.iter().filter(|&&b| b == b'\n').count();
                assert_eq!(count_byte(part, b'\n'), want, "from {start} to {len}");
            }
        }
        let all_lf = &bytes[40_000..];
        assert_eq!(count_byte(all_lf, b'\n'), all_lf.len());
    }

    #[test]
    fn unavailable_path_is_an_error_not_a_crash() {
        let mut out = Positions::new();
        for path in ScanPath::ALL {
            let r = scan_with(path, b"1=2\x01", &mut out);
            assert_eq!(r.is_ok(), path.is_available());
        }
    }

    #[test]
    fn names_round_trip() {
        for p in ScanPath::ALL {
            assert_eq!(ScanPath::from_name(p.name()), Some(p));
        }
        assert_eq!(ScanPath::from_name("neon"), None);
    }

    #[test]
    fn fixcore_scan_values_name_paths() {
        use std::ffi::OsStr;
        assert_eq!(env_cap(None), None);
        assert_eq!(env_cap(Some(OsStr::new(""))), None);
        assert_eq!(env_cap(Some(OsStr::new("AVX2"))), Some(ScanPath::Avx2));
        let e = std::panic::catch_unwind(|| env_cap(Some(OsStr::new("avx-512")))).unwrap_err();
        assert_eq!(
            e.downcast_ref::<String>().map(String::as_str),
            Some(
                "FIXCORE_SCAN=\"avx-512\" names no scan path \
                 (expected scalar, avx2, avx512 or avx512vbmi2)"
            )
        );
    }

    /// The suite is run once per `FIXCORE_SCAN` value with the
    /// `scan-cap-env` feature (`cargo xtask ci`); this makes sure each such
    /// run really uses the path it names, and that a cap asked for later
    /// reports the path in use.
    #[test]
    fn detected_path_honours_the_cap() {
        let best = *ScanPath::available().last().unwrap();
        let want = if cfg!(feature = "scan-cap-env") {
            env_cap(std::env::var_os("FIXCORE_SCAN").as_deref()).map_or(best, |c| best.min(c))
        } else {
            best
        };
        assert_eq!(ScanPath::detect(), want);
        // Uncapped again: accepted only when that is what is in use.
        let again = ScanPath::cap(ScanPath::Avx512Vbmi2);
        assert_eq!(again, if best == want { Ok(want) } else { Err(want) });
        if want != ScanPath::Scalar {
            assert_eq!(ScanPath::cap(ScanPath::Scalar), Err(want));
        }
    }

    /// Independent of `x86::has_*`: ask the CPU directly.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_cpus_offer_the_avx512_paths() {
        let avail = ScanPath::available();
        assert!(avail.contains(&ScanPath::Scalar));
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("bmi1") {
            assert!(avail.contains(&ScanPath::Avx2), "{avail:?}");
        }
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") {
            assert!(avail.contains(&ScanPath::Avx512), "{avail:?}");
            if is_x86_feature_detected!("avx512vbmi2") {
                assert!(avail.contains(&ScanPath::Avx512Vbmi2), "{avail:?}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn simd_equals_scalar_random(bytes in proptest::collection::vec(
            prop_oneof![Just(SOH), Just(b'='), any::<u8>(), b'0'..=b'9'], 0..700)) {
            check_all(&bytes);
        }

        #[test]
        fn simd_equals_scalar_field_soup(fields in proptest::collection::vec(
            (1u32..20000, "[ -~]{0,30}"), 0..60), cut in any::<prop::sample::Index>()) {
            let mut m = Vec::new();
            for (t, v) in &fields {
                m.extend_from_slice(format!("{t}={v}\x01").as_bytes());
            }
            let end = if m.is_empty() { 0 } else { cut.index(m.len() + 1) };
            check_all(&m[..end]);
        }
    }
}

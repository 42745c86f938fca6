//! The lines zstd prints on stderr at its default verbosity, in its
//! layout, so that scripts and eyes used to zstd read ours the same way:
//!
//! - one input compressed: `a.txt                : 45.57%   (  6.04 KiB =>   2.75 KiB, a.txt.zst) `;
//! - several: `  2 files compressed : 40.33% (  65.9 KiB =>   26.6 KiB)`;
//! - one input decompressed or tested: `a.txt.zst           : 6182 bytes `;
//! - several: `2 files decompressed :  67484 bytes total `.
//!
//! zstd prints nothing of this when the output is stdout, nor with `-q`.
//!
//! ```
//! use zstdkit::job::summary;
//!
//! assert_eq!(summary::decompressed("a.txt.zst", 6182), "a.txt.zst           : 6182 bytes ");
//! ```

/// A byte count as zstd shows it: bytes below 1 KiB, else the largest
/// binary unit it reaches, with fewer decimals the larger the number
/// (`  1000 B`, ` 1.000 KiB`, `  1.01 KiB`, `  59.9 KiB`, `   100 KiB`).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 6] = [" KiB", " MiB", " GiB", " TiB", " PiB", " EiB"];
    if bytes < 1024 {
        return format!("{bytes:>6} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >> (10 * (unit + 2)) > 0 {
        value /= 1024.0;
        unit += 1;
    }
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else if value > 1.0 {
        2
    } else {
        3
    };
    format!("{value:>6.decimals$}{}", UNITS[unit])
}

/// What zstd calls an input in these lines: its path, or `/*stdin*\`.
pub fn name(path: &std::path::Path) -> String {
    if path == std::path::Path::new("-") {
        "/*stdin*\\".into()
    } else {
        path.display().to_string()
    }
}

/// One input compressed into `output`.
pub fn compressed(input: &str, read: u64, written: u64, output: &str) -> String {
    if read == 0 {
        return format!(
            "{input:<20} :  ({} => {}, {output}) ",
            size(read),
            size(written)
        );
    }
    let percent = written as f64 / read as f64 * 100.0;
    format!(
        "{input:<20} :{percent:6.2}%   ({} => {}, {output}) ",
        size(read),
        size(written)
    )
}

/// Several inputs compressed, `read` and `written` bytes in all.
pub fn compressed_total(files: usize, read: u64, written: u64) -> String {
    if read == 0 {
        return format!(
            "{files:3} files compressed : ({} => {})",
            total_size(read),
            total_size(written)
        );
    }
    let percent = written as f64 / read as f64 * 100.0;
    format!(
        "{files:3} files compressed : {percent:.2}% ({} => {})",
        total_size(read),
        total_size(written)
    )
}

/// A size in the totals line: as [`size`], but zstd pads the unit to the
/// width of `KiB` there (`     4   B`).
fn total_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes:>6}   B")
    } else {
        size(bytes)
    }
}

/// One input decompressed (or tested) into `bytes` bytes.
pub fn decompressed(input: &str, bytes: u64) -> String {
    format!("{input:<20}: {bytes} bytes ")
}

/// Several inputs decompressed into `bytes` bytes in all.
pub fn decompressed_total(files: usize, bytes: u64) -> String {
    format!("{files} files decompressed : {bytes:>6} bytes total ")
}

/// The verbose tool's line for one input (zstd's own `-v` line differs):
/// `input` of `plain` bytes is `packed` bytes coded, in `elapsed`, with
/// the share, the ratio and the speed over the plain bytes
/// (`a: 1000 → 250 bytes (25.00%, ratio 4.000), 1.0 MB/s`).
pub fn verbose(input: &str, plain: u64, packed: u64, elapsed: std::time::Duration) -> String {
    let secs = elapsed.as_secs_f64();
    format!(
        "{input}: {plain} → {packed} bytes ({:.2}%, ratio {:.3}), {:.1} MB/s",
        100.0 * packed as f64 / plain.max(1) as f64,
        plain as f64 / packed.max(1) as f64,
        plain as f64 / 1e6 / secs.max(1e-9),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verbose_line_has_the_share_ratio_and_speed() {
        let line = verbose("a", 1000, 250, std::time::Duration::from_millis(1));
        assert_eq!(line, "a: 1000 → 250 bytes (25.00%, ratio 4.000), 1.0 MB/s");
        // Nothing coded in no time divides by nothing.
        let line = verbose("-", 0, 0, std::time::Duration::ZERO);
        assert_eq!(line, "-: 0 → 0 bytes (0.00%, ratio 0.000), 0.0 MB/s");
    }

    /// Sizes as zstd 1.5.4 printed them for files of these lengths.
    #[test]
    fn sizes_read_as_zstds() {
        for (n, shown) in [
            (0, "     0 B"),
            (5, "     5 B"),
            (1000, "  1000 B"),
            (1023, "  1023 B"),
            (1024, " 1.000 KiB"),
            (1025, "  1.00 KiB"),
            (2000, "  1.95 KiB"),
            (10_239, " 10.00 KiB"),
            (10_240, "  10.0 KiB"),
            (61_302, "  59.9 KiB"),
            (102_399, " 100.0 KiB"),
            (102_400, "   100 KiB"),
            (1_048_575, "  1024 KiB"),
            (5_000_000, "  4.77 MiB"),
            (2_000_000_000, "  1.86 GiB"),
        ] {
            assert_eq!(size(n), shown, "{n}");
        }
    }

    #[test]
    fn lines_read_as_zstds() {
        assert_eq!(
            compressed("s.txt", 5, 18, "s.txt.zst"),
            "s.txt                :360.00%   (     5 B =>     18 B, s.txt.zst) "
        );
        assert_eq!(
            compressed("r0", 0, 13, "r0.zst"),
            "r0                   :  (     0 B =>     13 B, r0.zst) "
        );
        assert_eq!(
            compressed_total(2, 67_484, 27_239),
            "  2 files compressed : 40.36% (  65.9 KiB =>   26.6 KiB)"
        );
        assert_eq!(
            compressed_total(2, 4, 30),
            "  2 files compressed : 750.00% (     4   B =>     30   B)"
        );
        assert_eq!(
            decompressed("s.txt.zst", 5),
            "s.txt.zst           : 5 bytes "
        );
        assert_eq!(
            decompressed_total(2, 67_484),
            "2 files decompressed :  67484 bytes total "
        );
    }
}

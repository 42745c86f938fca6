//! zstd's advanced compression parameters, in the form `zstd --zstd=`
//! takes them: `wlog=23,clog=23,hlog=22,slog=6,mml=3,tlen=48,strat=6`.
//!
//! ```
//! use zstdkit::{Params, tuning::Tuning};
//! let t: Tuning = "windowLog=20,strat=4".parse()?;
//! assert_eq!(t.get("wlog"), Some(20));
//! let p = Params::for_level(19).tune(t); // the level first, then these
//! # let _ = p;
//! # Ok::<(), zstdkit::Error>(())
//! ```

use std::path::Path;
use std::str::FromStr;

use zstd_safe::CParameter;

use crate::error::Error;

/// One parameter: zstd's long and short names for it and the setting it
/// becomes.
struct Knob {
    long: &'static str,
    short: &'static str,
    setting: fn(u32) -> CParameter,
}

/// Every parameter `--zstd=` names, in zstd 1.5.4's order.
const KNOBS: [Knob; 12] = [
    knob("windowLog", "wlog", CParameter::WindowLog),
    knob("chainLog", "clog", CParameter::ChainLog),
    knob("hashLog", "hlog", CParameter::HashLog),
    knob("searchLog", "slog", CParameter::SearchLog),
    knob("minMatch", "mml", CParameter::MinMatch),
    knob("targetLength", "tlen", CParameter::TargetLength),
    knob("strategy", "strat", strategy),
    knob("overlapLog", "ovlog", CParameter::OverlapSizeLog),
    knob("ldmHashLog", "lhlog", CParameter::LdmHashLog),
    knob("ldmMinMatch", "lmml", CParameter::LdmMinMatch),
    knob("ldmBucketSizeLog", "lblog", CParameter::LdmBucketSizeLog),
    knob("ldmHashRateLog", "lhrlog", CParameter::LdmHashRateLog),
];

const fn knob(long: &'static str, short: &'static str, setting: fn(u32) -> CParameter) -> Knob {
    Knob {
        long,
        short,
        setting,
    }
}

/// zstd's strategy by its number (1 fast … 9 btultra2; parsing refuses
/// any other).
fn strategy(n: u32) -> CParameter {
    use zstd_safe::zstd_sys::ZSTD_strategy as S;
    CParameter::Strategy(match n {
        1 => S::ZSTD_fast,
        2 => S::ZSTD_dfast,
        3 => S::ZSTD_greedy,
        4 => S::ZSTD_lazy,
        5 => S::ZSTD_lazy2,
        6 => S::ZSTD_btlazy2,
        7 => S::ZSTD_btopt,
        8 => S::ZSTD_btultra,
        _ => S::ZSTD_btultra2,
    })
}

/// Advanced parameters set over a level, each `None` (or written as 0,
/// which zstd reads as "the level's own") keeping the level's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tuning {
    values: [Option<u32>; KNOBS.len()],
}

impl Tuning {
    /// The value set for the parameter named `name` (long or short name).
    pub fn get(&self, name: &str) -> Option<u32> {
        let i = KNOBS
            .iter()
            .position(|k| k.long == name || k.short == name)?;
        self.values[i]
    }

    /// Whether no parameter is set.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(Option::is_none)
    }

    /// The settings, by their long names, in zstd's order.
    pub(crate) fn settings(&self) -> impl Iterator<Item = (&'static str, CParameter)> + '_ {
        KNOBS
            .iter()
            .zip(self.values)
            .filter_map(|(k, v)| v.map(|v| (k.long, (k.setting)(v))))
    }
}

impl FromStr for Tuning {
    type Err = Error;

    /// Reads `name=value` pairs separated by commas, as zstd 1.5.4's
    /// `--zstd=` does: long or short names; decimal values, with `K` or
    /// `M` (`KiB`, `MiB`) as zstd's number reader takes them, and nothing
    /// read as 0. An unknown name, other text, an empty list or a
    /// trailing comma is an error, and so is a strategy outside 1..=9
    /// (zstd refuses it as out of bound when it starts).
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || Error::Tuning { text: s.to_owned() };
        let mut t = Tuning::default();
        for pair in s.split(',') {
            let (name, value) = pair.split_once('=').ok_or_else(bad)?;
            let i = KNOBS
                .iter()
                .position(|k| k.long == name || k.short == name)
                .ok_or_else(bad)?;
            let v = number(value).ok_or_else(bad)?;
            if KNOBS[i].long == "strategy" && v > 9 {
                return Err(bad());
            }
            t.values[i] = (v != 0).then_some(v);
        }
        Ok(t)
    }
}

/// A number as zstd's `readU32FromChar` reads one (its `-B#` and its
/// `--zstd=` values): digits (none is 0), then `K` or `M` with an
/// optional `iB`; `None` for other text or past `u32` ([`number_checked`]
/// tells the two apart).
pub fn number(text: &str) -> Option<u32> {
    number_checked(text).ok()
}

/// Why [`number_checked`] refused a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberError {
    /// Not a number as zstd writes one.
    Invalid,
    /// A number, larger than `u32` holds.
    TooLarge,
}

/// [`number`], saying whether a refused text is no number or one too
/// large: digits past `u64` or a product past `u32` are
/// [`NumberError::TooLarge`].
pub fn number_checked(text: &str) -> Result<u32, NumberError> {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(end);
    let shift = match unit.strip_suffix("iB").unwrap_or(unit) {
        "" if unit.is_empty() => 0,
        "K" => 10,
        "M" => 20,
        _ => return Err(NumberError::Invalid),
    };
    // Digits alone fail to parse only by overflowing.
    let n: u64 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| NumberError::TooLarge)?
    };
    // checked_mul, not checked_shl: a shift drops high bits silently.
    n.checked_mul(1 << shift)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or(NumberError::TooLarge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_too_large_are_told_from_no_numbers() {
        assert_eq!(number_checked("512K"), Ok(512 << 10));
        assert_eq!(number_checked("4MiB"), Ok(4 << 20));
        assert_eq!(number_checked(""), Ok(0));
        assert_eq!(number_checked("4095M"), Ok(4095 << 20));
        for big in [
            "4096M",
            "4294967296",
            "99999999999",
            "99999999999999999999999K",
        ] {
            assert_eq!(number_checked(big), Err(NumberError::TooLarge), "{big}");
        }
        for bad in ["1G", "x", "1.5M", "iB", "-1"] {
            assert_eq!(number_checked(bad), Err(NumberError::Invalid), "{bad}");
        }
    }

    #[test]
    fn long_and_short_names_read_alike() {
        let a: Tuning = "windowLog=20,chainLog=18,hashLog=17,searchLog=3,minMatch=5,\
                         targetLength=16,strategy=4"
            .parse()
            .unwrap();
        let b: Tuning = "wlog=20,clog=18,hlog=17,slog=3,mml=5,tlen=16,strat=4"
            .parse()
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.settings().count(), 7);
        // 0 is zstd's "the level's own".
        assert!("wlog=0".parse::<Tuning>().unwrap().is_empty());
        assert!("wlog=".parse::<Tuning>().unwrap().is_empty());
        assert_eq!("tlen=1K".parse::<Tuning>().unwrap().get("tlen"), Some(1024));
        assert_eq!(
            "tlen=2MiB".parse::<Tuning>().unwrap().get("targetLength"),
            Some(2 << 20)
        );
    }

    #[test]
    fn malformed_lists_are_refused() {
        for s in [
            "",
            "foo=1",
            "wlog",
            "wlog=2x",
            "wlog=1,",
            "wlog=-1",
            "strat=10",
            "wlog=1iB",
            "wlog=4096M",
            "wlog=17592186044416M",
        ] {
            let e = s.parse::<Tuning>().unwrap_err();
            assert!(matches!(e, Error::Tuning { .. }), "{s}: {e}");
        }
    }
}

/// The parameters zstd picks for a level and an input size, as
/// `zstd --show-default-cparams` prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelParams {
    /// windowLog, chainLog, hashLog, searchLog, minMatch, targetLength
    /// and strategy, in that order.
    pub values: [u32; 7],
}

impl LevelParams {
    /// zstd's parameters for `level` on `src_size` bytes (`None`: unknown,
    /// as for stdin) after a `dict_size`-byte dictionary.
    pub fn for_level(level: i32, src_size: Option<u64>, dict_size: u64) -> LevelParams {
        LevelParams {
            values: crate::ffi::level_params(level, src_size, dict_size),
        }
    }

    /// zstd's `--show-default-cparams` block for one input at `level`
    /// after a `dict_size`-byte dictionary: the input's name and size
    /// (`-` named stdin, its size unknown, as a device's or a missing
    /// file's), then [`LevelParams::lines`] for that size.
    pub fn shown_for(input: &Path, level: i32, dict_size: u64) -> Vec<String> {
        let size = (input != Path::new("-"))
            .then(|| std::fs::metadata(input).ok().filter(|m| m.is_file()))
            .flatten()
            .map(|m| m.len());
        let head = match size {
            Some(n) => format!("{} ({n} bytes)", input.display()),
            None if input == Path::new("-") => "stdin (src size unknown)".to_string(),
            None => format!("{} (src size unknown)", input.display()),
        };
        let mut lines = vec![head];
        lines.extend(LevelParams::for_level(level, size, dict_size).lines());
        lines
    }

    /// The lines `zstd --show-default-cparams` prints under the input's
    /// name: ` - windowLog     : 23` and so on, the strategy by zstd's
    /// name for it.
    pub fn lines(&self) -> Vec<String> {
        const NAMES: [&str; 7] = [
            "windowLog",
            "chainLog",
            "hashLog",
            "searchLog",
            "minMatch",
            "targetLength",
            "strategy",
        ];
        const STRATEGIES: [&str; 10] = [
            "",
            "ZSTD_fast",
            "ZSTD_dfast",
            "ZSTD_greedy",
            "ZSTD_lazy",
            "ZSTD_lazy2",
            "ZSTD_btlazy2",
            "ZSTD_btopt",
            "ZSTD_btultra",
            "ZSTD_btultra2",
        ];
        NAMES
            .iter()
            .zip(self.values)
            .map(|(name, v)| {
                if *name == "strategy" {
                    let s = STRATEGIES.get(v as usize).copied().unwrap_or("");
                    format!(" - {name:<13} : {s} ({v})")
                } else {
                    format!(" - {name:<13} : {v}")
                }
            })
            .collect()
    }
}

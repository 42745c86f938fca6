//! Named compression recipes and the explicit parameters behind them.

use std::fmt;
use std::str::FromStr;

use zstd_safe::{CCtx, CParameter};

use crate::error::{Error, Result};
use crate::tuning::Tuning;

/// zstd's match-finding strategies, fastest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// `ZSTD_fast`
    Fast,
    /// `ZSTD_dfast`
    Dfast,
    /// `ZSTD_greedy`
    Greedy,
    /// `ZSTD_lazy`
    Lazy,
    /// `ZSTD_lazy2`
    Lazy2,
    /// `ZSTD_btlazy2`
    Btlazy2,
    /// `ZSTD_btopt`
    Btopt,
    /// `ZSTD_btultra`
    Btultra,
    /// `ZSTD_btultra2`
    Btultra2,
}

impl Strategy {
    /// Every strategy, fastest first.
    pub const ALL: [Strategy; 9] = [
        Strategy::Fast,
        Strategy::Dfast,
        Strategy::Greedy,
        Strategy::Lazy,
        Strategy::Lazy2,
        Strategy::Btlazy2,
        Strategy::Btopt,
        Strategy::Btultra,
        Strategy::Btultra2,
    ];

    /// The lower-case name zstd uses (`fast`, `dfast`, … `btultra2`).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Fast => "fast",
            Strategy::Dfast => "dfast",
            Strategy::Greedy => "greedy",
            Strategy::Lazy => "lazy",
            Strategy::Lazy2 => "lazy2",
            Strategy::Btlazy2 => "btlazy2",
            Strategy::Btopt => "btopt",
            Strategy::Btultra => "btultra",
            Strategy::Btultra2 => "btultra2",
        }
    }

    /// zstd's numeric id (1 = fast … 9 = btultra2), as the `zstd` CLI's
    /// `--zstd=strategy=N` takes it.
    pub fn id(self) -> u32 {
        self as u32 + 1
    }

    fn to_zstd(self) -> zstd_safe::Strategy {
        use zstd_safe::Strategy as Z;
        match self {
            Strategy::Fast => Z::ZSTD_fast,
            Strategy::Dfast => Z::ZSTD_dfast,
            Strategy::Greedy => Z::ZSTD_greedy,
            Strategy::Lazy => Z::ZSTD_lazy,
            Strategy::Lazy2 => Z::ZSTD_lazy2,
            Strategy::Btlazy2 => Z::ZSTD_btlazy2,
            Strategy::Btopt => Z::ZSTD_btopt,
            Strategy::Btultra => Z::ZSTD_btultra,
            Strategy::Btultra2 => Z::ZSTD_btultra2,
        }
    }
}

impl FromStr for Strategy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Strategy::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| Error::UnknownName {
                kind: "strategy",
                name: s.to_owned(),
                expected: Strategy::ALL.map(Strategy::name).join(", "),
            })
    }
}

/// A named preset of level and strategy, as the reference library defines
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Recipe {
    /// Level 1, `fast`: lowest latency.
    Fast,
    /// Level 3, `dfast`: zstd's default trade-off.
    #[default]
    Balanced,
    /// Level 6, `lazy2`: executables and other binary data.
    Binary,
    /// Level 9, `btopt`: prose, logs, source code.
    Text,
    /// Level 9, `btultra`: JSON, CSV, serialized records.
    StructuredData,
    /// Level 22, `btultra2`: smallest output, slowest.
    Maximum,
}

impl Recipe {
    /// Every recipe, fastest first.
    pub const ALL: [Recipe; 6] = [
        Recipe::Fast,
        Recipe::Balanced,
        Recipe::Binary,
        Recipe::Text,
        Recipe::StructuredData,
        Recipe::Maximum,
    ];

    /// The recipe's name as the CLI and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Recipe::Fast => "fast",
            Recipe::Balanced => "balanced",
            Recipe::Binary => "binary",
            Recipe::Text => "text",
            Recipe::StructuredData => "structured_data",
            Recipe::Maximum => "maximum",
        }
    }

    /// The compression level.
    pub fn level(self) -> i32 {
        match self {
            Recipe::Fast => 1,
            Recipe::Balanced => 3,
            Recipe::Binary => 6,
            Recipe::Text | Recipe::StructuredData => 9,
            Recipe::Maximum => 22,
        }
    }

    /// The match-finding strategy.
    pub fn strategy(self) -> Strategy {
        match self {
            Recipe::Fast => Strategy::Fast,
            Recipe::Balanced => Strategy::Dfast,
            Recipe::Binary => Strategy::Lazy2,
            Recipe::Text => Strategy::Btopt,
            Recipe::StructuredData => Strategy::Btultra,
            Recipe::Maximum => Strategy::Btultra2,
        }
    }

    /// The full parameter set of this recipe, ready for overrides.
    pub fn params(self) -> Params {
        Params::from(self)
    }
}

impl fmt::Display for Recipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Recipe {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.replace('-', "_");
        Recipe::ALL
            .into_iter()
            .find(|r| r.name() == wanted)
            .ok_or_else(|| Error::UnknownName {
                kind: "recipe",
                name: s.to_owned(),
                expected: Recipe::ALL.map(Recipe::name).join(", "),
            })
    }
}

/// Everything that shapes a compressed frame: a level, optional overrides,
/// and frame options. Built from a [`Recipe`] and adjusted with the builder
/// methods.
///
/// ```
/// use zstdkit::{Params, Recipe, Strategy};
/// let p = Params::from(Recipe::Text).level(12).window_log(Some(24)).workers(2);
/// assert_eq!(p.strategy_override(), Some(Strategy::Btopt));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    level: i32,
    strategy: Option<Strategy>,
    window_log: Option<u32>,
    long_distance: bool,
    checksum: bool,
    workers: u32,
    tuning: Tuning,
    content_size: bool,
    job_size: Option<u32>,
    rsyncable: bool,
}

impl From<Recipe> for Params {
    fn from(r: Recipe) -> Self {
        Params {
            level: r.level(),
            strategy: Some(r.strategy()),
            window_log: None,
            long_distance: false,
            checksum: true,
            workers: 0,
            tuning: Tuning::default(),
            content_size: true,
            job_size: None,
            rsyncable: false,
        }
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::from(Recipe::default())
    }
}

impl Params {
    /// zstd's own parameters for `level`, with no strategy override: exactly
    /// what `zstd -LEVEL` does.
    pub fn for_level(level: i32) -> Params {
        Params {
            strategy: None,
            level,
            ..Params::default()
        }
    }

    /// Overrides the compression level (negative levels are zstd's "fast"
    /// levels; the maximum is 22).
    pub fn level(mut self, level: i32) -> Self {
        self.level = level;
        self
    }

    /// Overrides (or with `None`, stops overriding) the strategy.
    pub fn strategy(mut self, strategy: Option<Strategy>) -> Self {
        self.strategy = strategy;
        self
    }

    /// Overrides the window log (10..=31); `None` keeps the level's.
    pub fn window_log(mut self, window_log: Option<u32>) -> Self {
        self.window_log = window_log;
        self
    }

    /// Enables long-distance matching with the given window log (27 when
    /// `None`), as `zstd --long[=WLOG]` does.
    pub fn long(mut self, window_log: Option<u32>) -> Self {
        self.long_distance = true;
        self.window_log = Some(window_log.unwrap_or(27));
        self
    }

    /// Writes (default) or omits the 4-byte content checksum of each frame.
    pub fn checksum(mut self, on: bool) -> Self {
        self.checksum = on;
        self
    }

    /// Compresses with `n` zstd worker threads (0 = single-threaded, in the
    /// caller's thread).
    pub fn workers(mut self, n: u32) -> Self {
        self.workers = n;
        self
    }

    /// Sets zstd's advanced parameters over everything else (`zstd
    /// --zstd=`): each one set replaces the level's, the recipe's and the
    /// window log's value.
    pub fn tune(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Writes (default) or omits the decompressed size in each frame's
    /// header (`zstd --no-content-size`).
    pub fn content_size(mut self, on: bool) -> Self {
        self.content_size = on;
        self
    }

    /// The input bytes of each worker's job (`zstd -B#`; `None`: zstd's
    /// choice). It applies with workers only.
    pub fn job_size(mut self, bytes: Option<u32>) -> Self {
        self.job_size = bytes;
        self
    }

    /// Cuts jobs where the content says, so that a small change to the
    /// input changes little of the output (`zstd --rsyncable`). It applies
    /// with workers only.
    pub fn rsyncable(mut self, on: bool) -> Self {
        self.rsyncable = on;
        self
    }

    /// The compression level.
    pub fn compression_level(&self) -> i32 {
        self.level
    }

    /// The strategy override, if any.
    pub fn strategy_override(&self) -> Option<Strategy> {
        self.strategy
    }

    /// The window-log override, if any.
    pub fn window_log_override(&self) -> Option<u32> {
        self.window_log
    }

    /// Whether long-distance matching is on.
    pub fn long_distance(&self) -> bool {
        self.long_distance
    }

    /// Whether frames carry a content checksum.
    pub fn has_checksum(&self) -> bool {
        self.checksum
    }

    /// Number of zstd worker threads.
    pub fn worker_count(&self) -> u32 {
        self.workers
    }

    /// Every parameter as zstd takes it, with its name for errors, in the
    /// order it must be set: the level first, because setting it resets the
    /// derived parameters that the overrides then replace.
    pub(crate) fn settings(&self) -> impl Iterator<Item = (&'static str, CParameter)> {
        [
            Some(("level", CParameter::CompressionLevel(self.level))),
            self.strategy
                .map(|s| ("strategy", CParameter::Strategy(s.to_zstd()))),
            self.window_log
                .map(|w| ("window_log", CParameter::WindowLog(w))),
            Some((
                "long",
                CParameter::EnableLongDistanceMatching(self.long_distance),
            )),
            Some(("checksum", CParameter::ChecksumFlag(self.checksum))),
            Some(("workers", CParameter::NbWorkers(self.workers))),
            Some((
                "content_size",
                CParameter::ContentSizeFlag(self.content_size),
            )),
            self.job_size.map(|b| ("job_size", CParameter::JobSize(b))),
            self.rsyncable
                .then_some(("rsyncable", CParameter::RSyncable(true))),
        ]
        .into_iter()
        .flatten()
        .chain(self.tuning.settings())
    }

    /// Applies every parameter to a compression context.
    pub(crate) fn apply(&self, cctx: &mut CCtx<'_>) -> Result<()> {
        self.settings().try_for_each(|(name, p)| set(cctx, name, p))
    }
}

fn set(cctx: &mut CCtx<'_>, name: &'static str, p: CParameter) -> Result<()> {
    cctx.set_parameter(p)
        .map(drop)
        .map_err(|code| Error::Parameter {
            name,
            detail: zstd_safe::get_error_name(code),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_match_the_reference_table() {
        let table: Vec<(&str, i32, &str)> = Recipe::ALL
            .iter()
            .map(|r| (r.name(), r.level(), r.strategy().name()))
            .collect();
        assert_eq!(
            table,
            [
                ("fast", 1, "fast"),
                ("balanced", 3, "dfast"),
                ("binary", 6, "lazy2"),
                ("text", 9, "btopt"),
                ("structured_data", 9, "btultra"),
                ("maximum", 22, "btultra2"),
            ]
        );
    }

    #[test]
    fn names_parse_and_unknown_names_list_the_choices() {
        assert_eq!(
            "structured-data".parse::<Recipe>().unwrap(),
            Recipe::StructuredData
        );
        let err = "fastest".parse::<Recipe>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown recipe 'fastest' (expected one of: fast, balanced, binary, text, structured_data, maximum)"
        );
        assert_eq!("btultra2".parse::<Strategy>().unwrap().id(), 9);
        assert_eq!(Strategy::Fast.id(), 1);
    }

    #[test]
    fn out_of_range_parameters_are_rejected_by_name() {
        let mut cctx = CCtx::create();
        let err = Params::default()
            .window_log(Some(5))
            .apply(&mut cctx)
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Parameter {
                    name: "window_log",
                    ..
                }
            ),
            "{err}"
        );
    }
}

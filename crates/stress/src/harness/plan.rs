//! A comparison of pool strategies: each measured in turn, round after
//! round, so that the machine's drift during the run (other load, thermal
//! state, page cache) falls on every strategy alike.

use std::time::Duration;

use zstdkit::Recipe;

use super::config::{Config, Runtime};
use super::outcome::{Outcome, Sample};
use crate::pool::PoolKind;
use crate::workload::Workload;
use crate::{Error, Result};

/// Strategies measured in turn for `rounds` rounds. Each round gives each
/// strategy a fresh runtime and pool and `config.duration / rounds` of
/// time, the first `config.warmup` of it excluded; the rounds of one
/// strategy add up into one [`Outcome`].
#[derive(Debug, Clone)]
pub struct Plan {
    /// The run every strategy makes; its pool and duration are replaced
    /// per round by the strategy and the round's slice.
    pub config: Config,
    /// The strategies, in the order each round measures them.
    pub strategies: Vec<PoolKind>,
    /// How many rounds (at least 1).
    pub rounds: u32,
}

/// Where a running plan is, with the latest sample of the current run.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// The strategy being measured.
    pub pool: PoolKind,
    /// The round, from 1.
    pub round: u32,
    /// How many rounds there are.
    pub rounds: u32,
    /// How long this round's run lasts.
    pub slice: Duration,
    /// The latest sample.
    pub sample: &'a Sample,
}

/// The one-line live status of a running plan: the strategy, the round,
/// how far into it, and the latest sample's rates, sizes and counts.
impl std::fmt::Display for Progress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.sample;
        write!(
            f,
            "{} round {}/{} {:>5.1}/{:.0}s  {:>7.1} MB/s  {:>6.1} MB/CPU-s  ratio {:.2}  RSS {:.1} MiB  threads {}  tasks {}  contexts {}",
            self.pool,
            self.round,
            self.rounds,
            s.at.as_secs_f64(),
            self.slice.as_secs_f64(),
            s.mb_per_s,
            s.mb_per_cpu_s,
            s.ratio,
            s.rss_bytes as f64 / (1 << 20) as f64,
            s.os_threads,
            s.tasks,
            s.contexts_alive,
        )
    }
}

impl Plan {
    /// One strategy (`config.pool`), one continuous run.
    pub fn single(config: Config) -> Plan {
        Plan {
            strategies: vec![config.pool],
            config,
            rounds: 1,
        }
    }

    /// The short comparison `perfkit bench` makes: every strategy,
    /// saturating, 100 producers and 100 consumers of 2 KiB UUID blocks at
    /// the fast recipe, in two rounds of 300 ms each, the first 100 ms a
    /// warm-up (400 ms measured per strategy): about 2.5 s in all.
    pub fn quick() -> Plan {
        Plan {
            config: Config {
                params: Recipe::Fast.params().checksum(false),
                interval: Duration::ZERO,
                workload: Workload::uuids(2048, 2048),
                duration: Duration::from_millis(600),
                runtime: Runtime::Tokio,
                warmup: Duration::from_millis(100),
                sample_every: Duration::from_millis(100),
                ..Config::default()
            },
            strategies: PoolKind::ALL.to_vec(),
            rounds: 2,
        }
    }

    /// How long each strategy runs in each round.
    pub fn slice(&self) -> Duration {
        self.config.duration / self.rounds.max(1)
    }

    /// Runs every round, calling `progress` with each sample; returns one
    /// outcome per strategy, in the plan's order.
    pub fn run(&self, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Vec<Outcome>> {
        let rounds = self.rounds;
        if rounds == 0 || self.strategies.is_empty() {
            return Err(Error::Config(
                "a plan needs at least one round and one strategy".into(),
            ));
        }
        if self.config.soak.is_some() && rounds > 1 {
            return Err(Error::Config(
                "a soak needs one continuous run per strategy, not rounds".into(),
            ));
        }
        let slice = self.slice();
        if self.config.warmup >= slice {
            return Err(Error::Config(format!(
                "each of the {rounds} rounds ({slice:?}) must be longer than the warm-up ({:?})",
                self.config.warmup
            )));
        }
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(self.strategies.len());
        for round in 1..=rounds {
            for (i, &pool) in self.strategies.iter().enumerate() {
                let cfg = Config {
                    pool,
                    duration: slice,
                    ..self.config.clone()
                };
                let out = super::run(&cfg, &mut |sample: &Sample| {
                    progress(Progress {
                        pool,
                        round,
                        rounds,
                        slice,
                        sample,
                    })
                })?;
                match outcomes.get_mut(i) {
                    Some(o) => o.absorb(out),
                    None => outcomes.push(out),
                }
            }
        }
        Ok(outcomes)
    }
}

//! The perfkit commands the benches time as whole processes, described by
//! type: the library says what it wants run, and the binary, which owns
//! the flags, turns each description into the command line that does it
//! ([`Launcher`]). So no library spells the binary's flags or finds the
//! program it is linked into, and the edge from the benches to the binary
//! is a value the binary hands in, visible in every signature that runs a
//! process.
//!
//! ```
//! use std::path::Path;
//! use std::process::Command;
//! use perfkit_bench::invocation::{Invocation, Launcher};
//!
//! /// A launcher that runs `echo` with a word per invocation.
//! struct Echo;
//! impl Launcher for Echo {
//!     fn command(&self, what: &Invocation<'_>) -> Command {
//!         let mut c = Command::new("echo");
//!         if let Invocation::FixCheck { input } = what {
//!             c.arg("check").arg(input);
//!         }
//!         c
//!     }
//! }
//! let c = Echo.command(&Invocation::FixCheck { input: Path::new("orders.fix") });
//! assert_eq!(c.get_args().count(), 2);
//! ```

use std::path::Path;
use std::process::Command;

#[cfg(feature = "zstd")]
use zstdkit::Recipe;

/// One run of a perfkit command, as the benches want it.
#[derive(Debug, Clone, Copy)]
pub enum Invocation<'a> {
    /// Compress `input` with `recipe` (overwriting `output`, or to stdout
    /// when `None`), on `threads` workers when given.
    #[cfg(feature = "zstd")]
    Compress {
        /// The file to compress.
        input: &'a Path,
        /// The recipe (level and strategy).
        recipe: Recipe,
        /// Worker threads (`-T`); the command's default when `None`.
        threads: Option<u32>,
        /// The frame's file, replaced if it exists; stdout when `None`.
        output: Option<&'a Path>,
    },
    /// Decompress the frame `input` to stdout.
    Decompress {
        /// The frame's file.
        input: &'a Path,
    },
    /// Check every FIX message in `input`.
    FixCheck {
        /// One message per line.
        input: &'a Path,
    },
    /// Generate `count` random expressions over `params` boolean
    /// parameters into `output`, as the reference generator does.
    BetreeExpressions {
        /// Parameters of the schema.
        params: usize,
        /// Expressions to write.
        count: usize,
        /// The file written.
        output: &'a Path,
    },
    /// Generate `count` random events over `params` boolean parameters
    /// into `output`.
    BetreeEvents {
        /// Parameters of the schema.
        params: usize,
        /// Events to write.
        count: usize,
        /// The file written.
        output: &'a Path,
    },
    /// Index the expressions in `exprs` and search every event in
    /// `events`, matches written to `output`.
    BetreeSearch {
        /// The expression file.
        exprs: &'a Path,
        /// The event file.
        events: &'a Path,
        /// Whether the events are JSON objects, one a line
        /// (`--events-format json`), rather than Erlang lists.
        json_events: bool,
        /// Where the matches go.
        output: &'a Path,
        /// Where the command writes its index build's and search's times
        /// (`--times`), if anywhere.
        times: Option<&'a Path>,
    },
    /// Add `input` to the archive `archive` with deflate at `level`,
    /// quietly; both names are relative to the command's directory, which
    /// the caller sets.
    Zip {
        /// The archive's name.
        archive: &'a Path,
        /// The file added, stored under this name.
        input: &'a Path,
        /// Deflate level, 0 to 9.
        level: u32,
    },
    /// Delete the entry `entry` from the archive `archive` (`zip -d`),
    /// quietly; the archive's name is relative to the command's
    /// directory, which the caller sets.
    ZipDelete {
        /// The archive, updated in place.
        archive: &'a Path,
        /// The entry's name.
        entry: &'a str,
    },
    /// Test every entry of `archive`.
    UnzipTest {
        /// The archive.
        archive: &'a Path,
    },
    /// Serve the sessions in the QuickFIX settings file `settings` with
    /// the order-filling application, until stdin closes or a signal.
    FixAcceptor {
        /// The settings file.
        settings: &'a Path,
    },
    /// Send `orders` orders on the session in `settings`, at most
    /// `window` unanswered at a time, writing each order's latency to
    /// `latencies`; with `spin`, the reader busy-polls for that long
    /// before it sleeps.
    FixInitiator {
        /// The settings file.
        settings: &'a Path,
        /// Orders to send.
        orders: u64,
        /// Orders in flight at most.
        window: u64,
        /// The latency file written.
        latencies: &'a Path,
        /// The reader's busy-poll time, as the command's flag reads it
        /// (`50us`); `None` for the command's default.
        spin: Option<&'a str>,
        /// Every message sent and received, one a line, written here.
        log: Option<&'a Path>,
    },
}

/// Turns an [`Invocation`] into the command that runs it: implemented by
/// the binary, which knows its own path and flags. The command's stdio
/// and directory are left for the caller to set.
pub trait Launcher: Send + Sync {
    /// The command that runs `what`.
    fn command(&self, what: &Invocation<'_>) -> Command;
}

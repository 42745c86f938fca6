//! The library half of the `perfkit` binary: what every subcommand shares.
//!
//! - [`report`]: the one renderer (tables, `--json`, `--hlog`,
//!   `--percentiles`, `--plot`) all measuring subcommands use, over the
//!   report model of `perfkit_measure::report`;
//! - [`cleanup`]: temporaries deleted when a signal ends the process;
//! - [`printable`]: names (from archives, file systems) made safe to print;
//! - [`units`]: durations and sizes on the command line.
//!
//! The subcommands themselves live in the binary (`src/cmd/`), one module
//! each; they parse arguments, call the libraries (the measuring ones call
//! `perfkit-bench`), and render a [`report::Report`].
//!
//! ```
//! use perfkit::report::{self, Report, Row, Value};
//! let mut h = report::latency_histogram();
//! report::record(&mut h, std::time::Duration::from_micros(42));
//! let mut rep = Report::new("example");
//! rep.section("demo").row(Row::new("call").latency(h).col("ratio", Value::num(3.0, 2)));
//! assert!(report::render_text(&rep, false).contains("42.0 µs"));
//! ```

pub mod cleanup;
#[doc(hidden)]
pub mod fuzzing;
pub mod printable;
pub mod report;
pub mod units;

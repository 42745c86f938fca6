//! The library half of the `perfkit` binary: what every subcommand shares.
//!
//! - [`report`]: the one renderer (tables, `--json`, `--hlog`,
//!   `--percentiles`, `--plot`) all measuring subcommands use;
//! - [`corpus`]: the deterministic benchmark corpus;
//! - [`child`]: a child process's wall, CPU and peak RSS from `wait4`;
//! - [`cleanup`]: temporaries deleted when a signal ends the process;
//! - [`machine`]: the CPU model and core count every report states;
//! - [`peer`]: where the separately built peer programs are found;
//! - [`pipeline`]: a read-ahead and a write-behind thread with bounded
//!   buffers, so a command overlaps its I/O with its work;
//! - [`printable`]: names (from archives, file systems) made safe to print;
//! - [`units`]: durations and sizes on the command line.
//!
//! The subcommands themselves live in the binary (`src/cmd/`), one module
//! each; they parse arguments, call the libraries, and render a [`report::Report`].
//!
//! ```
//! use perfkit::report::{self, Report, Row, Value};
//! let mut h = report::latency_histogram();
//! report::record(&mut h, std::time::Duration::from_micros(42));
//! let mut rep = Report::new("example");
//! rep.section("demo").row(Row::new("call").latency(h).col("ratio", Value::num(3.0, 2)));
//! assert!(report::render_text(&rep, false).contains("42.0 µs"));
//! ```

pub mod child;
pub mod cleanup;
pub mod corpus;
pub mod machine;
pub mod peer;
pub mod pipeline;
pub mod printable;
pub mod report;
pub mod units;

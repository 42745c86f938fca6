//! The library half of the `perfkit` binary: what every subcommand shares
//! that is no library's concern.
//!
//! - [`printable`]: names (from archives, file systems) made safe to print;
//! - [`units`]: durations and sizes on the command line.
//!
//! The subcommands themselves live in the binary (`src/cmd/`), one module
//! each; they parse arguments, call the libraries (the measuring ones call
//! `perfkit-bench`), and render a `perfkit_report::Report` through
//! `perfkit_report::emit`; every file they write goes through
//! `landing::Output`.
//!
//! ```
//! assert_eq!(perfkit::units::parse_size("64KiB"), Ok(64 << 10));
//! assert_eq!(perfkit::printable::name("a\nb"), "a^Jb");
//! ```

pub mod printable;
pub mod units;

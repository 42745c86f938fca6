//! Command-line flags several subcommands share, parsed by clap and turned
//! into the plain options the library takes. The library (`perfkit::…`)
//! knows nothing of clap; only the binary parses a command line.

use std::path::PathBuf;

use perfkit::report::ReportOptions;

/// The output flags every measuring subcommand flattens into its args.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReportArgs {
    /// Print one JSON document instead of tables (nothing else on stdout).
    #[arg(long)]
    pub json: bool,
    /// Also write every histogram to FILE in HdrHistogram interval-log format.
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<PathBuf>,
    /// Also print the full HdrHistogram percentile distribution of each row.
    #[arg(long)]
    pub percentiles: bool,
    /// Also draw every row's latency percentile spectrum to an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

impl ReportArgs {
    /// The rendering these flags ask for.
    pub fn options(&self) -> ReportOptions {
        ReportOptions {
            json: self.json,
            hlog: self.hlog.clone(),
            percentiles: self.percentiles,
            plot: self.plot.clone(),
        }
    }
}

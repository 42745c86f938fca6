//! Rendering a report as a command line asked: tables or JSON on the
//! output, and the optional interval-log and plot files.

use std::io::Write;
use std::path::{Path, PathBuf};

use landing::{Output, OutputError};

use crate::hlog::{HlogError, write_hlog};
use crate::json::to_json;
use crate::model::Report;
use crate::svg::{PlotError, render_svg};
use crate::text::render_text_as;

/// How a report is rendered: what the binary's `--json`, `--hlog`,
/// `--percentiles` and `--plot` flags asked for. Plain data, so a caller
/// without a command line (a test, another tool) renders the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportOptions {
    /// One JSON document instead of tables (nothing else on the output).
    pub json: bool,
    /// Also write every histogram to this file in HdrHistogram
    /// interval-log format.
    pub hlog: Option<PathBuf>,
    /// Also print the full HdrHistogram percentile distribution of each row.
    pub percentiles: bool,
    /// Also draw every row's latency percentile spectrum to this SVG file.
    pub plot: Option<PathBuf>,
    /// Tables with every column and one line per row, however wide,
    /// instead of fitted to [`crate::TEXT_WIDTH`] columns.
    pub wide: bool,
}

/// Why a report could not be rendered or its files written. Each file's
/// error says which file and what for, as the binary prints it.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// A report file named a directory (it would only be refused at the
    /// final rename).
    #[error("{what} {} is a directory", path.display())]
    Directory {
        /// "interval log" or "plot".
        what: &'static str,
        /// The path given.
        path: PathBuf,
    },
    /// A report file could not be opened; `flag` is the option that
    /// named it (the output's own error names the path).
    #[error("--{flag}")]
    Open {
        /// "hlog" or "plot".
        flag: &'static str,
        /// Why.
        #[source]
        source: OutputError,
    },
    /// The report could not be written to the output, which every caller
    /// gives as standard output (a reader that went away is
    /// [`std::io::ErrorKind::BrokenPipe`], see [`EmitError::io_error`]).
    /// Named, so a full disk is not a bare "No space left on device".
    #[error("writing the report to standard output")]
    Io(#[from] std::io::Error),
    /// The JSON document could not be serialised.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The interval log could not be written.
    #[error("writing interval log {}", path.display())]
    Hlog {
        /// Its path.
        path: PathBuf,
        /// Why.
        #[source]
        source: HlogError,
    },
    /// The plot could not be drawn.
    #[error("writing plot {}", path.display())]
    Plot {
        /// Its path.
        path: PathBuf,
        /// Why.
        #[source]
        source: PlotError,
    },
    /// A report file could not be written or put in place.
    #[error("writing {what} {}", path.display())]
    File {
        /// "interval log" or "plot".
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        #[source]
        source: OutputError,
    },
}

impl EmitError {
    /// The I/O error writing to the output, if that is what failed: how a
    /// caller tells a reader that went away (a broken pipe) from a failure.
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            EmitError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// The `--hlog` and `--plot` files of one run, opened (their temporary
/// siblings created) before anything is measured, so an unwritable path
/// fails at once instead of after the whole run.
#[derive(Debug, Default)]
pub struct ReportFiles {
    hlog: Option<(PathBuf, Output)>,
    plot: Option<(PathBuf, Output)>,
}

impl ReportFiles {
    /// Opens the files `options` names, if any.
    pub fn open(options: &ReportOptions) -> Result<ReportFiles, EmitError> {
        Self::open_paths(options.hlog.as_deref(), options.plot.as_deref())
    }

    /// Opens `hlog` and `plot` (either may be absent) through [`Output`].
    pub fn open_paths(hlog: Option<&Path>, plot: Option<&Path>) -> Result<ReportFiles, EmitError> {
        let open = |path: &Path, what, flag| -> Result<(PathBuf, Output), EmitError> {
            // A directory would only be refused at the final rename.
            if path.is_dir() {
                return Err(EmitError::Directory {
                    what,
                    path: path.to_path_buf(),
                });
            }
            // Output::create's errors name the path; this says what it is for.
            let out =
                Output::create(path, true).map_err(|source| EmitError::Open { flag, source })?;
            Ok((path.to_path_buf(), out))
        };
        Ok(ReportFiles {
            hlog: hlog.map(|p| open(p, "interval log", "hlog")).transpose()?,
            plot: plot.map(|p| open(p, "plot", "plot")).transpose()?,
        })
    }

    /// Takes the interval log out, for a command that writes its own (the
    /// merge of many logs); [`emit_to`] then writes no interval log.
    pub fn take_hlog(&mut self) -> Option<(PathBuf, Output)> {
        self.hlog.take()
    }

    /// Whether these are the files `options` names (the same paths, or none).
    pub fn matches(&self, options: &ReportOptions) -> bool {
        self.hlog.as_ref().map(|(p, _)| p.as_path()) == options.hlog.as_deref()
            && self.plot.as_ref().map(|(p, _)| p.as_path()) == options.plot.as_deref()
    }
}

/// Renders `report` as `options` ask: JSON or tables on `out`, and the
/// optional files. Files are written to a temporary sibling and renamed, so
/// a failure never leaves a half-written file behind.
pub fn emit(
    report: &Report,
    options: &ReportOptions,
    out: &mut dyn Write,
) -> Result<(), EmitError> {
    emit_to(report, options, out, ReportFiles::open(options)?)
}

/// [`emit`] into files opened earlier with [`ReportFiles::open`].
pub fn emit_to(
    report: &Report,
    options: &ReportOptions,
    out: &mut dyn Write,
    files: ReportFiles,
) -> Result<(), EmitError> {
    // Rendered whole first, then written with write_all: a reader that went
    // away is then an io::Error (BrokenPipe) the caller recognises, where
    // serde_json's writer would wrap it in its own error type.
    let text = if options.json {
        let mut doc = serde_json::to_string_pretty(&to_json(report))?;
        doc.push('\n');
        doc
    } else {
        render_text_as(report, options.percentiles, options.wide)
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    if let Some((path, mut file)) = files.hlog {
        if let Err(source) = write_hlog(report, file.file_mut()) {
            return Err(EmitError::Hlog { path, source });
        }
        commit(file, "interval log", path)?;
    }
    if let Some((path, mut file)) = files.plot {
        let svg = match render_svg(report) {
            Ok(svg) => svg,
            Err(source) => return Err(EmitError::Plot { path, source }),
        };
        if let Err(e) = file.file_mut().write_all(svg.as_bytes()) {
            return Err(EmitError::File {
                what: "plot",
                path,
                source: e.into(),
            });
        }
        commit(file, "plot", path)?;
    }
    Ok(())
}

/// Puts a written report file in place.
fn commit(file: Output, what: &'static str, path: PathBuf) -> Result<(), EmitError> {
    file.commit()
        .map_err(|source| EmitError::File { what, path, source })
}

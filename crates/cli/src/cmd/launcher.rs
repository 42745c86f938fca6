//! How the benches run perfkit's own commands as whole processes: they
//! describe each run by type ([`Invocation`]) and this module, which knows
//! the program's path and its flags, spells the command line. The flags
//! below are the ones `flags/` defines; a renamed flag breaks the commands
//! part's tests here, in the binary, instead of in a library.

use std::path::PathBuf;
use std::process::Command;

use perfkit_bench::invocation::{Invocation, Launcher};

/// Starts this `perfkit` program.
pub struct Perfkit {
    exe: PathBuf,
}

impl Perfkit {
    /// The program running now, found through `/proc/self/exe`.
    pub fn this() -> anyhow::Result<Perfkit> {
        let exe = std::env::current_exe()
            .map_err(|e| anyhow::anyhow!("finding this program to run its commands: {e}"))?;
        Ok(Perfkit { exe })
    }
}

impl Launcher for Perfkit {
    fn command(&self, what: &Invocation<'_>) -> Command {
        let mut c = Command::new(&self.exe);
        match *what {
            Invocation::Compress {
                input,
                recipe,
                threads,
                output,
            } => {
                c.args(["compress", "--recipe", &recipe.to_string()]);
                if let Some(t) = threads {
                    c.args(["-T", &t.to_string()]);
                }
                match output {
                    Some(out) => c.args(["-f", "-o"]).arg(out),
                    None => c.arg("-c"),
                };
                c.arg(input);
            }
            Invocation::Decompress { input } => {
                c.args(["decompress", "-c"]).arg(input);
            }
            Invocation::FixCheck { input } => {
                c.args(["fix", "check"]).arg(input);
            }
            Invocation::BetreeExpressions {
                params,
                count,
                output,
            } => {
                c.args(["betree", "gen-exprs", "--params", &params.to_string()])
                    .args(["--count", &count.to_string(), "-o"])
                    .arg(output);
            }
            Invocation::BetreeEvents {
                params,
                count,
                output,
            } => {
                c.args(["betree", "gen-events", "--params", &params.to_string()])
                    .args(["--count", &count.to_string(), "-o"])
                    .arg(output);
            }
            Invocation::BetreeSearch {
                exprs,
                events,
                json_events,
                output,
                times,
            } => {
                c.args(["betree", "search", "--exprs"])
                    .arg(exprs)
                    .arg("--events")
                    .arg(events)
                    .arg("-o")
                    .arg(output);
                if json_events {
                    c.args(["--events-format", "json"]);
                }
                if let Some(times) = times {
                    c.arg("--times").arg(times);
                }
            }
            Invocation::Zip {
                archive,
                input,
                level,
            } => {
                c.args(["zip", "-q", &format!("-{level}")])
                    .arg(archive)
                    .arg(input);
            }
            Invocation::ZipDelete { archive, entry } => {
                c.args(["zip", "-q", "-d"]).arg(archive).arg(entry);
            }
            Invocation::UnzipTest { archive } => {
                c.args(["unzip", "-t"]).arg(archive);
            }
            Invocation::FixAcceptor { settings } => {
                c.args(["fix", "acceptor"])
                    .arg(settings)
                    .args(["--app", "exec"]);
            }
            Invocation::FixInitiator {
                settings,
                orders,
                window,
                latencies,
                spin,
                log,
            } => {
                c.args(["fix", "initiator"])
                    .arg(settings)
                    .args(["--orders", &orders.to_string()])
                    .args(["--window", &window.to_string()])
                    .arg("--latencies")
                    .arg(latencies);
                if let Some(spin) = spin {
                    c.args(["--spin", spin]);
                }
                if let Some(log) = log {
                    c.arg("--log").arg(log);
                }
            }
        }
        c
    }
}

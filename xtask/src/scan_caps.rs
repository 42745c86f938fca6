//! The FIX crates' tests again under each slower SIMD scan path.
//!
//! fixcore picks the fastest scan path the CPU has, so the suite only
//! exercises that one. With fixcore's `scan-cap-env` feature the pick is
//! capped by `FIXCORE_SCAN`; fixcore turns the feature on for itself as a
//! dev-dependency, so every workspace test build (and only a test build)
//! has it. The capped runs therefore reuse the executables the suite
//! already built: selecting the FIX crates with `cargo test -p` would
//! resolve their dependencies' features afresh and rebuild most of the
//! graph (199 s on a cold CI machine, against about 30 s of tests).

use std::path::Path;

use anyhow::{Result, bail};
use fixcore::scan::ScanPath;

use crate::suite::{self, TestBinary};

/// The crates (directories under `crates/`) whose tests run under each
/// cap: the scanner's own, and the session and engine built on it.
const FIX_CRATES: [&str; 3] = ["fixcore", "fixsession", "fixengine"];

/// Runs the FIX crates' test executables among `binaries` (the suite's)
/// once per scan path slower than this CPU's best. A cap at or above the
/// best would repeat the uncapped run (the pick never exceeds what the CPU
/// has), so on a CPU without AVX-512 that is `scalar` alone. Doc tests are
/// not executables and run uncapped only.
pub fn run_capped(root: &Path, binaries: &[TestBinary]) -> Result<()> {
    let mut slower = ScanPath::available();
    slower.pop();
    let dirs: Vec<_> = FIX_CRATES
        .iter()
        .map(|c| root.join("crates").join(c))
        .collect();
    let fix: Vec<TestBinary> = binaries
        .iter()
        .filter(|b| dirs.contains(&b.package_dir))
        .cloned()
        .collect();
    // Each crate has unit tests at least: finding none of a crate's means
    // the layout or cargo's messages changed, not that all passed.
    for (krate, dir) in FIX_CRATES.iter().zip(&dirs) {
        if !fix.iter().any(|b| &b.package_dir == dir) {
            bail!("the suite has no test executable of {krate}");
        }
    }
    for cap in slower.iter().rev().map(|p| p.name()) {
        eprintln!("xtask: the FIX crates' tests with FIXCORE_SCAN={cap}");
        suite::run(&fix, &[("FIXCORE_SCAN", cap)])?;
    }
    Ok(())
}

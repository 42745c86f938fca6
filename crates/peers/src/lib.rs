//! The names perfkit and `cargo xtask peers` agree on for the peer
//! programs: the systems perfkit is measured against that cannot be linked
//! into its binary. `xtask` installs the programs under these names and
//! `perfkit`'s benches look them up by them.
//!
//! [`postgres`] is the one throwaway PostgreSQL server: the fix bench's
//! PostgreSQL store row starts it at run time, and the tests start it
//! through `perfkit_testkit::postgres`. [`port`] gives the loopback
//! ports such servers listen on.
//!
//! A crate of its own, with no dependencies, so that xtask can share the
//! names without compiling the perfkit binary (and the C libraries it
//! links) before it runs fmt and clippy.
//!
//! ```
//! let dir = std::path::Path::new("target/peers");
//! assert_eq!(dir.join(perfkit_peers::QUICKFIX), std::path::Path::new("target/peers/quickfix-parse"));
//! ```

#![forbid(unsafe_code)]

pub mod port;
#[cfg(unix)]
pub mod postgres;

/// The QuickFIX peer's file name in the peer directory: the C++ program
/// built from `xtask/peers/quickfix/`, which `perfkit fix-bench` runs
/// beside its own parse rows.
pub const QUICKFIX: &str = "quickfix-parse";

/// The QuickFIX session peer's file name: `quickfix_session.cpp` from
/// `xtask/peers/quickfix/`, a QuickFIX initiator and acceptor that
/// `perfkit fix-bench`'s session part runs beside perfkit's own.
pub const QUICKFIX_SESSION: &str = "quickfix-session";

/// The FIX 4.4 dictionary installed beside [`QUICKFIX`], which the peer
/// loads (`--dict`).
pub const QUICKFIX_DICTIONARY: &str = "quickfix-FIX44.xml";

/// The file written beside [`QUICKFIX`] holding the version of the QuickFIX
/// package it was built against, one line (QuickFIX's headers carry no
/// version macro, and its pkg-config file names an older release).
pub const QUICKFIX_VERSION_FILE: &str = "quickfix-parse.version";

/// The s-zip peer's file name in the peer directory: `xtask/peers/szip/`,
/// s-zip on its own default backend, which `perfkit zip bench` runs beside
/// its own writers.
pub const SZIP: &str = "szip-peer";

/// The load generator's floor: `xtask/peers/floor/fixload_floor.c`, the
/// generator's I/O in C with no FIX work, which `perfkit fix load` runs
/// after each rate for the ratio of its CPU per order to the floor's.
pub const LOAD_FLOOR: &str = "fixload-floor";

/// The session round trip's floor: `xtask/peers/floor/roundtrip_floor.c`,
/// one order at a time over loopback in C with no FIX work, which the
/// session part of `perfkit fix bench` runs beside perfkit's engines.
pub const ROUNDTRIP_FLOOR: &str = "fix-roundtrip-floor";

/// The QuickFIX/J peer's launcher: `xtask/peers/quickfixj/`, a QuickFIX/J
/// 2.3 initiator and acceptor (the second independent engine of the FIX
/// interoperability tests), run with the JDK on this machine.
pub const QUICKFIXJ: &str = "quickfixj-peer";

/// The environment variable that overrides the peer directory.
pub const DIR_ENV: &str = "PERFKIT_PEERS_DIR";

/// Where `cargo xtask peers` installs the peers: `$PERFKIT_PEERS_DIR` when
/// set, else `peers/` in cargo's target directory (`$CARGO_TARGET_DIR`, or
/// `target` under the current directory, the workspace root).
pub fn install_dir() -> std::path::PathBuf {
    if let Some(d) = std::env::var_os(DIR_ENV) {
        return d.into();
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "target".into())
        .join("peers")
}

/// Where a program built from this workspace finds the peers:
/// `$PERFKIT_PEERS_DIR` if set, else where [`install_dir`] put them for
/// this build: `peers/` in the target directory the build used
/// (`$CARGO_TARGET_DIR` when the build had one, else the workspace's
/// `target/`). Known at compile time, so no program looks for its own
/// path (and a copy of the binary elsewhere still finds them).
pub fn dir() -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os(DIR_ENV) {
        return Some(d.into());
    }
    let target = match option_env!("CARGO_TARGET_DIR") {
        Some(t) => std::path::PathBuf::from(t),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
    };
    Some(target.join("peers"))
}

/// The path of peer program `name`, if it has been built.
pub fn locate(name: &str) -> Option<std::path::PathBuf> {
    locate_in(&dir()?, name)
}

/// The path of peer program `name` in `dir`, if it is a file there.
pub fn locate_in(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    let p = dir.join(name);
    p.is_file().then_some(p)
}

/// The newest PostgreSQL server directory, `/usr/lib/postgresql/*/bin`
/// holding `initdb` and `pg_ctl` (Debian's layout), or `None` when no
/// server is installed: [`postgres::Cluster`] starts its clusters from it.
pub fn postgres_bin() -> Option<std::path::PathBuf> {
    let mut found: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_built_files() {
        let d = std::env::temp_dir().join(format!("perfkit-peers-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        assert_eq!(locate_in(&d, QUICKFIX), None);
        std::fs::write(d.join(QUICKFIX), b"").unwrap();
        assert_eq!(locate_in(&d, QUICKFIX), Some(d.join(QUICKFIX)));
        std::fs::create_dir(d.join("dir")).unwrap();
        assert_eq!(locate_in(&d, "dir"), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}

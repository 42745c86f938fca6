//! Where the peer programs live: the systems perfkit is measured against
//! that cannot be linked into this binary (QuickFIX is C++; `s-zip` on its
//! own default backend needs a build of its own, because one binary links
//! one flate2 backend).
//!
//! `cargo xtask peers` builds them into `target/peers/`. A bench that finds
//! a peer runs it in the same invocation and prints the ratio; one that does
//! not prints a note naming the command that builds it.

use std::path::{Path, PathBuf};

/// The environment variable that overrides the peer directory.
pub const DIR_ENV: &str = "PERFKIT_PEERS_DIR";

/// The directory peers are looked up in: `$PERFKIT_PEERS_DIR` if set, else
/// `peers/` beside the profile directory of the running binary
/// (`target/release/perfkit` → `target/peers/`), which is where
/// `cargo xtask peers` puts them.
pub fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(DIR_ENV) {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    // Test binaries live one level deeper (target/debug/deps/…).
    exe.ancestors()
        .skip(1)
        .take(3)
        .map(|a| a.join("peers"))
        .find(|p| p.is_dir())
}

/// The path of peer program `name`, if it has been built.
pub fn locate(name: &str) -> Option<PathBuf> {
    locate_in(&dir()?, name)
}

fn locate_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let p = dir.join(name);
    p.is_file().then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_built_files() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(locate_in(d.path(), "quickfix-parse"), None);
        std::fs::write(d.path().join("quickfix-parse"), b"").unwrap();
        assert_eq!(
            locate_in(d.path(), "quickfix-parse"),
            Some(d.path().join("quickfix-parse"))
        );
        std::fs::create_dir(d.path().join("dir")).unwrap();
        assert_eq!(locate_in(d.path(), "dir"), None);
    }
}

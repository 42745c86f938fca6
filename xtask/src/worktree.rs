//! Another revision's `perfkit`, built beside the work tree's: the checkout
//! and build that `bench-compare` and `same-output` share.
//!
//! REV is checked out as a git worktree under the task's own folder in
//! `target/` and built into a target directory of its own there, never the
//! work tree's: cargo names a workspace crate's artifacts by its path inside
//! the workspace, the same in both trees, and would take REV's artifacts
//! for the work tree's (a source file older than the artifact reads as
//! unchanged).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, run};

/// The cargo profile a build uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Profile {
    /// `cargo build` (target/debug).
    Dev,
    /// `cargo build --release` (target/release).
    Release,
}

impl Profile {
    /// The folder of the target directory the profile's binaries land in.
    fn dir(self) -> &'static str {
        match self {
            Profile::Dev => "debug",
            Profile::Release => "release",
        }
    }
}

/// The full commit id `rev` names, or an error saying it names none.
pub fn resolve(rev: &str) -> Result<String> {
    git_text(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
        .with_context(|| format!("{rev} is not a revision of this repository"))
}

/// A checkout of `sha` at `out/src-SHORT` (SHORT: its first 12 digits),
/// made unless one is there already.
pub fn checkout(out: &Path, sha: &str) -> Result<PathBuf> {
    let tree = out.join(format!("src-{}", short(sha)));
    if !tree.join("Cargo.toml").is_file() {
        // A stale registration (a folder deleted by hand) would refuse the
        // add.
        run(Command::new("git").args(["worktree", "prune"]))?;
        run(Command::new("git")
            .args(["worktree", "add", "--detach"])
            .arg(&tree)
            .arg(sha))?;
    }
    Ok(tree)
}

/// The first 12 digits of a commit id, which name its files.
pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// `cargo build [--release] --locked -p perfkit` in `tree`, into `target`
/// when given (else the tree's own `target/`); returns the binary's path.
pub fn build(tree: &Path, target: Option<&Path>, profile: Profile) -> Result<PathBuf> {
    let mut cmd = cargo();
    cmd.arg("build");
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    cmd.args(["--locked", "-p", "perfkit"]).current_dir(tree);
    if let Some(t) = target {
        cmd.env("CARGO_TARGET_DIR", t);
    }
    run(&mut cmd)?;
    let dir = target_dir(tree, target, std::env::var_os("CARGO_TARGET_DIR"));
    Ok(dir.join(profile.dir()).join("perfkit"))
}

/// Where the build above put its artifacts: `target` when given, else
/// where cargo put them, which is the `CARGO_TARGET_DIR` it inherited from
/// us (relative to `tree`) when that is set, and `tree/target` otherwise.
/// Assuming `tree/target` copied a stale binary from there when a caller
/// built elsewhere.
fn target_dir(tree: &Path, target: Option<&Path>, env: Option<std::ffi::OsString>) -> PathBuf {
    match (target, env) {
        (Some(t), _) => t.to_path_buf(),
        (None, Some(d)) if !d.is_empty() => tree.join(d),
        (None, _) => tree.join("target"),
    }
}

/// Copies a built binary to where a task keeps it, so a later build in the
/// same target directory cannot change it under a run.
pub fn copy(from: &Path, to: &Path) -> Result<()> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::copy(from, to)
        .map(drop)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))
}

fn git_text(args: &[&str]) -> Result<String> {
    let out = Command::new("git").args(args).output()?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8(out.stdout)?.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_looked_for_where_cargo_built_it() {
        let tree = Path::new("/w");
        let given = Path::new("/elsewhere");
        assert_eq!(target_dir(tree, Some(given), Some("/env".into())), given);
        assert_eq!(
            target_dir(tree, None, Some("/env".into())),
            Path::new("/env")
        );
        assert_eq!(
            target_dir(tree, None, Some("t2".into())),
            Path::new("/w/t2")
        );
        assert_eq!(
            target_dir(tree, None, Some("".into())),
            Path::new("/w/target")
        );
        assert_eq!(target_dir(tree, None, None), Path::new("/w/target"));
    }
}

//! Output names as zstd derives them from their inputs: `NAME.zst`
//! (`.gz`) when compressing, the suffix taken off when decoding (`.tzst`
//! and `.tgz` become `.tar`), and placed in an output folder, flat or
//! mirroring the input's path (zstd's `--output-dir-flat` and
//! `--output-dir-mirror`).
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use zstdkit::job::names::{Naming, OutputDir, derived_name};
//!
//! let input = Path::new("logs/a.tgz");
//! let decoded = derived_name(input, Naming::Decoded)?;
//! assert_eq!(decoded, Path::new("logs/a.tar"));
//! let flat = OutputDir::Flat(PathBuf::from("out"));
//! assert_eq!(flat.place(input, decoded.clone())?, Path::new("out/a.tar"));
//! let mirror = OutputDir::Mirror(PathBuf::from("out"));
//! assert_eq!(mirror.place(input, decoded)?, Path::new("out/logs/a.tar"));
//! assert!(derived_name(Path::new("a.txt"), Naming::Decoded).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Component, Path, PathBuf};

/// What an output's name is derived for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// Compressing into zstd frames: `NAME.zst`.
    Zstd,
    /// Compressing into gzip: `NAME.gz`.
    Gzip,
    /// Decoding: the suffix taken off.
    Decoded,
}

/// An input to decode whose name ends in no suffix zstd knows, so no
/// output name can be derived from it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown suffix (expected .zst or .gz)")]
pub struct UnknownSuffix;

/// An input whose path climbs (`..`), which has no place below a
/// mirroring output folder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot place it into '{}' (its path goes up, ..)", dir.display())]
pub struct ClimbsOut {
    /// The output folder.
    pub dir: PathBuf,
}

/// The output named from `input` as zstd names it: `NAME.zst` (`.gz`)
/// when compressing; the suffix taken off (`.tzst` and `.tgz` become
/// `.tar`) when decoding.
pub fn derived_name(input: &Path, naming: Naming) -> Result<PathBuf, UnknownSuffix> {
    let name = input.as_os_str().to_string_lossy();
    Ok(match naming {
        Naming::Zstd => PathBuf::from(format!("{name}.zst")),
        Naming::Gzip => PathBuf::from(format!("{name}.gz")),
        Naming::Decoded => {
            if let Some(stem) = [".zst", ".zstd", ".gz"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
            {
                PathBuf::from(stem)
            } else if let Some(stem) = name
                .strip_suffix(".tzst")
                .or_else(|| name.strip_suffix(".tgz"))
            {
                PathBuf::from(format!("{stem}.tar"))
            } else {
                return Err(UnknownSuffix);
            }
        }
    })
}

/// A folder for the outputs whose names are derived from their inputs'
/// (an explicit output wins over it, as in zstd).
#[derive(Debug, Clone)]
pub enum OutputDir {
    /// `--output-dir-flat DIR`: `DIR/NAME.zst`, the input's folders
    /// dropped.
    Flat(PathBuf),
    /// `--output-dir-mirror DIR`: `DIR/PATH.zst`, the input's path
    /// (its root dropped) kept below DIR.
    Mirror(PathBuf),
}

impl OutputDir {
    /// Where the output `derived` (named from `input`) goes. As zstd, a
    /// mirrored input whose path climbs (`..`) has no place below DIR.
    /// Nothing is made here: the caller makes the folders when it writes.
    pub fn place(&self, input: &Path, derived: PathBuf) -> Result<PathBuf, ClimbsOut> {
        Ok(match self {
            OutputDir::Flat(dir) => dir.join(derived.file_name().unwrap_or_default()),
            OutputDir::Mirror(dir) => {
                if input.components().any(|c| c == Component::ParentDir) {
                    return Err(ClimbsOut { dir: dir.clone() });
                }
                let below: PathBuf = derived
                    .components()
                    .filter(|c| matches!(c, Component::Normal(_)))
                    .collect();
                dir.join(below)
            }
        })
    }
}

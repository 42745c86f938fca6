//! Patches: a frame of a target compressed against a reference it shares
//! content with (the `zstd --patch-from` habit). The reference is zstd's
//! *prefix*, raw content the frame may copy from, so a new version of a
//! file compresses to little more than its differences, and only a holder
//! of the same reference can decode it.
//!
//! Frames are interchangeable with the `zstd` CLI's: `zstd -d
//! --patch-from=REF` decodes [`diff`]'s, and [`apply`] decodes `zstd
//! --patch-from`'s. Both sides hold the reference (at most [`MAX_SIZE`])
//! in memory, as the CLI does; [`diff`] holds the target and the patch
//! too, [`Applier`] streams the patch and what it decodes to.
//!
//! ```
//! let old = b"the quick brown fox jumps over the lazy dog. ".repeat(200);
//! let mut new = old.clone();
//! new.extend_from_slice(b"and then it slept.");
//! let patch = zstdkit::patch::diff(&old, &new, zstdkit::Recipe::Balanced)?;
//! assert!(patch.len() < 100);
//! assert_eq!(zstdkit::patch::apply(&old, &patch)?, new);
//! # Ok::<(), zstdkit::Error>(())
//! ```

use zstd_safe::{CCtx, CParameter, DCtx, DParameter, InBuffer, OutBuffer};

use crate::error::{Error, Result};
use crate::recipe::Params;

/// The largest window a patch frame may use: zstd's 64-bit maximum.
const WINDOW_LOG_MAX: u32 = 31;

/// zstd's smallest window log.
const WINDOW_LOG_MIN: u32 = 10;

/// zstd's strategy number from which its match finder is a binary tree
/// (`ZSTD_btlazy2`).
const BTLAZY2: u32 = 6;

/// How a patch is made, decided as zstd's CLI decides it
/// (`FIO_adjustParamsForPatchFromMode` in zstd 1.5): from the target's
/// size, the reference's and the level, before anything is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The frame's window log: the power of two above the target's size,
    /// within zstd's limits (10..=31). zstd sizes it to the target, not
    /// to the reference.
    pub window_log: u32,
    /// The target is larger than zstd's largest window: matches reach
    /// back at most 2 GiB, so the patch is larger than it could be (zstd
    /// says "Max window log exceeded by file").
    pub window_capped: bool,
    /// The window reaches past what the level's match finder cycles
    /// through, so long-distance matching is turned on: without it, a
    /// copy of the reference far back is not found (zstd says "long mode
    /// automatically triggered" unless `--long` asked for it already).
    pub long_distance: bool,
}

impl Plan {
    /// The notes zstd 1.5.4 prints of this plan, word for word, in its
    /// order: the window capped, then long-distance matching turned on
    /// (not when `long_asked`: it was asked for already).
    pub fn notes(&self, long_asked: bool) -> Vec<&'static str> {
        let mut notes = Vec::new();
        if self.window_capped {
            notes.push("Max window log exceeded by file (compression ratio will suffer)");
        }
        if self.long_distance && !long_asked {
            notes.push("long mode automatically triggered");
        }
        notes
    }
}

/// The plan of a patch of a `target`-byte file against a `reference`-byte
/// one at compression `level`.
pub fn plan(reference: u64, target: u64, level: i32) -> Plan {
    // zstd's FIO_highbit64(size) + 1: the number of bits of the size.
    let file_log = 64 - target.max(1).leading_zeros();
    let (chain_log, strategy) = crate::ffi::level_match_finder(level, target, reference);
    // ZSTD_cycleLog: a binary tree holds two entries per position.
    let cycle_log = chain_log - u32::from(strategy >= BTLAZY2);
    Plan {
        window_log: file_log.clamp(WINDOW_LOG_MIN, WINDOW_LOG_MAX),
        window_capped: file_log > WINDOW_LOG_MAX,
        long_distance: file_log > cycle_log,
    }
}

/// Compresses `target` into one frame that copies from `reference`
/// wherever it can, with the window and long-distance matching of
/// [`plan`] (on whenever `params` ask for it too), as zstd's CLI makes
/// its patches.
pub fn diff(reference: &[u8], target: &[u8], params: impl Into<Params>) -> Result<Vec<u8>> {
    let params = params.into();
    let plan = plan(
        reference.len() as u64,
        target.len() as u64,
        params.compression_level(),
    );
    let mut cctx = CCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
    params.apply(&mut cctx)?;
    let set = |cctx: &mut CCtx<'_>, p| cctx.set_parameter(p).map(drop).map_err(Error::zstd);
    // The plan's window replaces any other, as the CLI's does.
    set(&mut cctx, CParameter::WindowLog(plan.window_log))?;
    if plan.long_distance {
        set(&mut cctx, CParameter::EnableLongDistanceMatching(true))?;
    }
    cctx.ref_prefix(reference).map_err(Error::zstd)?;
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(target.len()));
    cctx.compress2(&mut out, target).map_err(Error::zstd)?;
    Ok(out)
}

/// The largest reference, and the largest target, a patch takes: zstd's
/// largest window (2^31 bytes), within which a frame can copy from the
/// whole reference. zstd's CLI refuses a larger file the same way ("Can't
/// handle files larger than 2 GB").
pub const MAX_SIZE: u64 = 1 << WINDOW_LOG_MAX;

/// Decodes a patch frame against `reference`, the file it was made from.
/// A frame made against another reference fails its checksum, or decodes
/// to other bytes when it has none; a frame whose window is beyond 2 GiB,
/// a truncated frame or trailing garbage is an error. Holds the whole
/// result: [`Applier`] streams it.
pub fn apply(reference: &[u8], patch: &[u8]) -> Result<Vec<u8>> {
    let mut applier = Applier::new(reference)?;
    let mut out: Vec<u8> = Vec::new();
    let mut at = 0;
    loop {
        if out.capacity() - out.len() < (64 << 10) {
            out.reserve(out.len().max(1 << 20));
        }
        let len = out.len();
        out.resize(out.capacity(), 0);
        let (used, made, done) = applier.step(&patch[at..], &mut out[len..])?;
        out.truncate(len + made);
        at += used;
        if done {
            break;
        }
        if at == patch.len() && made == 0 && used == 0 {
            return Err(Applier::cut_short());
        }
    }
    if at != patch.len() {
        return Err(Applier::trailing());
    }
    Ok(out)
}

/// A patch frame decoded as it streams in: the reference is held (it is
/// zstd's prefix), the patch and what it decodes to pass through in
/// pieces of the caller's size.
pub struct Applier<'r> {
    dctx: DCtx<'r>,
}

impl<'r> Applier<'r> {
    /// A decoder of one patch frame made against `reference`.
    pub fn new(reference: &'r [u8]) -> Result<Applier<'r>> {
        let mut dctx = DCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
        dctx.set_parameter(DParameter::WindowLogMax(WINDOW_LOG_MAX))
            .map_err(Error::zstd)?;
        dctx.ref_prefix(reference).map_err(Error::zstd)?;
        Ok(Applier { dctx })
    }

    /// Decodes what it can of `input` into `out`: returns the input bytes
    /// used, the output bytes made, and whether the frame is done (all of
    /// it decoded and given out). Called with no input, it still gives
    /// out what zstd holds.
    pub fn step(&mut self, input: &[u8], out: &mut [u8]) -> Result<(usize, usize, bool)> {
        let mut inb = InBuffer::around(input);
        let mut outb = OutBuffer::around(out);
        let left = self
            .dctx
            .decompress_stream(&mut outb, &mut inb)
            .map_err(Error::zstd)?;
        Ok((inb.pos(), outb.pos(), left == 0))
    }

    /// The error for a patch that ends inside its frame.
    pub fn cut_short() -> Error {
        Error::Zstd("the patch is cut short")
    }

    /// The error for bytes after the patch's frame.
    pub fn trailing() -> Error {
        Error::Zstd("bytes follow the patch frame (a patch is one frame)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions() -> (Vec<u8>, Vec<u8>) {
        let old: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i.wrapping_mul(2_654_435_761) >> 7).to_le_bytes())
            .collect();
        let mut new = old.clone();
        new[100_000..100_010].copy_from_slice(b"0123456789");
        new.extend_from_slice(b"appended");
        (old, new)
    }

    #[test]
    fn a_patch_holds_only_the_differences_and_restores_the_target() {
        let (old, new) = versions();
        let patch = diff(&old, &new, crate::Recipe::Balanced).unwrap();
        let alone = crate::compress(&new, crate::Recipe::Balanced).unwrap();
        assert!(
            patch.len() * 50 < alone.len(),
            "{} vs {}",
            patch.len(),
            alone.len()
        );
        assert_eq!(apply(&old, &patch).unwrap(), new);
    }

    #[test]
    fn the_wrong_reference_or_a_cut_patch_is_an_error() {
        let (old, new) = versions();
        let patch = diff(&old, &new, crate::Recipe::Balanced).unwrap();
        let mut other = old.clone();
        other[5000] ^= 1;
        // The frame's checksum catches a reference that differs.
        assert!(apply(&other, &patch).is_err());
        assert!(apply(&old, &patch[..patch.len() - 3]).is_err());
        let mut trailing = patch.clone();
        trailing.push(0);
        assert!(apply(&old, &trailing).is_err());
    }

    #[test]
    fn the_plan_is_zstds() {
        // The window is the power of two above the target, however large
        // the reference.
        assert_eq!(plan(0, 0, 3).window_log, 10);
        assert_eq!(plan(100_000, 10, 3).window_log, 10);
        assert_eq!(plan(10, 1 << 20, 3).window_log, 21);
        assert_eq!(plan(10, (1 << 20) - 1, 3).window_log, 20);
        assert_eq!(plan(1 << 20, 100_000, 3).window_log, 17);
        let huge = plan(0, u64::MAX, 3);
        assert_eq!((huge.window_log, huge.window_capped), (31, true));
        // Level 3's double-fast finder cycles through 2^16 positions
        // (ZSTD_getCParams), so a 100 KB target already needs long mode;
        // level 1 on 1 KB does not (its tables cover the window), nor
        // level 19 on 6 MiB (its binary tree cycles through 2^23).
        assert!(plan(100_000, 100_000, 3).long_distance);
        assert!(!plan(1000, 1000, 1).long_distance);
        assert!(!plan(6 << 20, 6 << 20, 19).long_distance);
        assert!(plan(10 << 20, 10 << 20, 19).long_distance);
    }

    #[test]
    fn the_notes_are_zstds_in_its_order() {
        assert_eq!(
            plan(0, u64::MAX, 3).notes(false),
            [
                "Max window log exceeded by file (compression ratio will suffer)",
                "long mode automatically triggered"
            ]
        );
        // --long given: nothing to say of it.
        assert_eq!(plan(100_000, 100_000, 3).notes(true), Vec::<&str>::new());
        assert!(plan(1000, 1000, 1).notes(false).is_empty());
    }
}

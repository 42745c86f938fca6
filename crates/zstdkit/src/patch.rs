//! Patches: a frame of a target compressed against a reference it shares
//! content with (the `zstd --patch-from` habit). The reference is zstd's
//! *prefix*, raw content the frame may copy from, so a new version of a
//! file compresses to little more than its differences, and only a holder
//! of the same reference can decode it.
//!
//! Frames are interchangeable with the `zstd` CLI's: `zstd -d
//! --patch-from=REF` decodes [`diff`]'s, and [`apply`] decodes `zstd
//! --patch-from`'s. Both sides hold the reference, the target and the
//! patch in memory, as the CLI does.
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

/// The window log a patch between files of these sizes needs: the
/// reference and the target must both fit in the window, as zstd's CLI
/// sizes it (the power of two above the larger, at least zstd's minimum).
pub fn window_log(reference: usize, target: usize) -> u32 {
    let larger = reference.max(target).max(1) as u64;
    (64 - larger.leading_zeros() + 1).clamp(10, WINDOW_LOG_MAX)
}

/// Compresses `target` into one frame that copies from `reference`
/// wherever it can.
pub fn diff(reference: &[u8], target: &[u8], params: impl Into<Params>) -> Result<Vec<u8>> {
    let params = params.into();
    let mut cctx = CCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
    params.apply(&mut cctx)?;
    let log = window_log(reference.len(), target.len());
    let set = |cctx: &mut CCtx<'_>, p| cctx.set_parameter(p).map(drop).map_err(Error::zstd);
    if params.window_log_override().is_none_or(|w| w < log) {
        set(&mut cctx, CParameter::WindowLog(log))?;
    }
    // Past the window a level's own tables reach, matches far back are
    // found by long-distance matching, as the CLI turns it on.
    if log > 27 {
        set(&mut cctx, CParameter::EnableLongDistanceMatching(true))?;
    }
    cctx.ref_prefix(reference).map_err(Error::zstd)?;
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(target.len()));
    cctx.compress2(&mut out, target).map_err(Error::zstd)?;
    Ok(out)
}

/// Decodes a patch frame against `reference`, the file it was made from.
/// A frame made against another reference fails its checksum, or decodes
/// to other bytes when it has none; a frame whose window is beyond 2 GiB,
/// a truncated frame or trailing garbage is an error.
pub fn apply(reference: &[u8], patch: &[u8]) -> Result<Vec<u8>> {
    let mut dctx = DCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
    dctx.set_parameter(DParameter::WindowLogMax(WINDOW_LOG_MAX))
        .map_err(Error::zstd)?;
    dctx.ref_prefix(reference).map_err(Error::zstd)?;
    let mut out: Vec<u8> = Vec::new();
    let mut input = InBuffer::around(patch);
    loop {
        if out.capacity() - out.len() < (64 << 10) {
            out.reserve(out.len().max(1 << 20));
        }
        let len = out.len();
        let mut spare = OutBuffer::around_pos(&mut out, len);
        let left = dctx
            .decompress_stream(&mut spare, &mut input)
            .map_err(Error::zstd)?;
        if left == 0 {
            break;
        }
        if input.pos() == patch.len() && spare.pos() == len {
            return Err(Error::Zstd("the patch is cut short"));
        }
    }
    if input.pos() != patch.len() {
        return Err(Error::Zstd(
            "bytes follow the patch frame (a patch is one frame)",
        ));
    }
    Ok(out)
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
    fn the_window_covers_both_files() {
        assert_eq!(window_log(0, 0), 10);
        assert_eq!(window_log(100_000, 10), 18);
        assert_eq!(window_log(10, 1 << 20), 22);
        assert_eq!(window_log(usize::MAX, 0), 31);
    }
}

//! How a ring is built (which setup flags the kernel grants), and whether
//! io_uring can be used here at all.

use std::io;

use io_uring::IoUring;

/// The setup flags a [`crate::Ring`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// A plain ring, no setup flags.
    Plain,
    /// COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN, then COOP_TASKRUN |
    /// SINGLE_ISSUER alone (DEFER_TASKRUN needs Linux 6.1, the other two
    /// 5.19 and 6.0), then a plain ring; the ring's
    /// [`crate::Ring::setup`] says which one it got. Such a ring must be
    /// used from the thread that built it.
    Deferred,
}

/// Builds a ring of `entries` entries as `setup` asks; the ring and which
/// flags it got, as a note for a report. An error only when not even a
/// plain ring can be created.
pub(crate) fn build(entries: u32, setup: Setup) -> io::Result<(IoUring, String)> {
    if setup == Setup::Plain {
        return Ok((IoUring::new(entries)?, "io_uring plain".into()));
    }
    let e1 = match IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
    {
        Ok(r) => {
            return Ok((
                r,
                "io_uring COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN".into(),
            ));
        }
        Err(e) => e,
    };
    let e2 = match IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .build(entries)
    {
        Ok(r) => {
            return Ok((
                r,
                format!(
                    "io_uring COOP_TASKRUN|SINGLE_ISSUER (DEFER_TASKRUN refused by the \
                     kernel: {e1}; fell back)"
                ),
            ));
        }
        Err(e) => e,
    };
    let r = IoUring::new(entries)?;
    Ok((
        r,
        format!(
            "io_uring plain (DEFER_TASKRUN refused: {e1}; COOP_TASKRUN|SINGLE_ISSUER \
             refused: {e2}; fell back)"
        ),
    ))
}

/// Whether this kernel lets the process create an io_uring at all; the
/// reason when not (no such syscall, disabled by sysctl or seccomp...).
pub fn probe() -> Result<(), String> {
    IoUring::new(2).map(drop).map_err(|e| e.to_string())
}

/// Whether a ring can be created and the kernel waits with a timeout in
/// `io_uring_enter` (EXT_ARG, Linux 5.11), which
/// [`crate::Ring::submit_and_wait`] with a timeout needs; the reason when
/// not.
pub fn probe_timed_waits() -> Result<(), String> {
    let ring = IoUring::new(2).map_err(|e| e.to_string())?;
    if !ring.params().is_feature_ext_arg() {
        return Err("the kernel's io_uring cannot wait with a timeout (no EXT_ARG)".into());
    }
    Ok(())
}

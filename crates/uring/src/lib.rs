//! io_uring with the ring owning its operations' buffers: the one place
//! where perfkit hands memory to the kernel through io_uring, shared by the
//! load generator's rings (`fixload`) and the echo bench's io_uring ends
//! (`perfkit_bench::fix::transport`). All the `unsafe` of io_uring buffer
//! ownership lives here; its users write none.
//!
//! An SQE points at memory the kernel reads or writes until its completion
//! arrives, so that memory must outlive the operation whatever happens to
//! the caller, an early return on an error included. A [`Ring`] therefore
//! owns one buffer per slot, keeps at most one operation in flight per
//! slot, and lends a slot's buffer out ([`Ring::get`], [`Ring::get_mut`])
//! only while no operation of that slot is in flight. A ring that winds
//! down with operations still in flight cancels them and waits for their
//! completions; if even that cannot be confirmed, it leaks their buffers
//! rather than free them under the kernel.
//!
//! - [`Ring`]: the slots and their buffers, SEND and RECV from a slot's
//!   buffer, reaping [`Completion`]s, waits with or without a timeout,
//!   [`Ring::cancel_and_drain`];
//! - [`Setup`]: a plain ring, or one with COOP_TASKRUN, SINGLE_ISSUER and
//!   DEFER_TASKRUN where the kernel has them;
//! - [`probe`], [`probe_timed_waits`]: whether io_uring can be used here.
//!
//! Linux only: elsewhere the crate is empty.
//!
//! ```no_run
//! let fd = 0; // a connected socket
//! let mut ring = perfkit_uring::Ring::new(vec![vec![0u8; 4096].into_boxed_slice()], perfkit_uring::Setup::Plain)?;
//! let mut done = Vec::with_capacity(1);
//! assert!(ring.recv(0, fd));
//! while done.is_empty() {
//!     ring.submit_and_wait(1, None)?;
//!     ring.reap(&mut done);
//! }
//! let n = usize::try_from(done[0].result).unwrap_or(0);
//! let got = &ring.get(0).expect("its receive completed")[..n];
//! # let _ = got;
//! # Ok::<(), std::io::Error>(())
//! ```

#![cfg(target_os = "linux")]

mod ring;
mod setup;

pub use ring::{Buffer, Completion, Ring};
pub use setup::{Setup, probe, probe_timed_waits};

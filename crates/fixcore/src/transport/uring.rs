//! io_uring echo ends. All the `unsafe` of the transports lives here: an SQE
//! points at a buffer the kernel uses until the completion arrives, and every
//! call below waits for that completion before the buffer can move.

use super::{EchoLogic, record};
use crate::{Error, Result};
use hdrhistogram::Histogram;
use io_uring::{IoUring, opcode, types};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Builds a ring; with `defer`, asks for COOP_TASKRUN | SINGLE_ISSUER |
/// DEFER_TASKRUN and falls back to a plain ring if the kernel refuses.
fn ring(defer: bool) -> Result<(IoUring, String)> {
    if defer {
        match IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(8)
        {
            Ok(r) => {
                return Ok((
                    r,
                    "io_uring COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN".into(),
                ));
            }
            Err(e) => {
                let r = IoUring::new(8).map_err(Error::io("creating io_uring"))?;
                return Ok((
                    r,
                    format!("io_uring plain (DEFER_TASKRUN refused by the kernel: {e}; fell back)"),
                ));
            }
        }
    }
    let r = IoUring::new(8).map_err(Error::io("creating io_uring"))?;
    Ok((r, "io_uring plain".into()))
}

/// Submits one SQE and waits for its completion; returns the result.
fn run_one(ring: &mut IoUring, sqe: &io_uring::squeue::Entry) -> Result<i32> {
    // SAFETY: the SQE's buffer (if any) is borrowed by the caller for the
    // whole of this function, and we do not return before its completion
    // has been reaped, so the kernel never sees a dangling pointer.
    unsafe {
        ring.submission()
            .push(sqe)
            .map_err(|_| Error::Thread("io_uring submission queue full"))?;
    }
    ring.submit_and_wait(1)
        .map_err(Error::io("io_uring_enter"))?;
    let cqe = ring
        .completion()
        .next()
        .ok_or(Error::Thread("io_uring returned no completion"))?;
    let r = cqe.result();
    if r < 0 {
        return Err(Error::Io {
            context: "io_uring operation",
            source: std::io::Error::from_raw_os_error(-r),
        });
    }
    Ok(r)
}

fn send_all(ring: &mut IoUring, fd: types::Fd, mut buf: &[u8]) -> Result<()> {
    while !buf.is_empty() {
        let sqe = opcode::Send::new(fd, buf.as_ptr(), buf.len() as u32).build();
        let n = run_one(ring, &sqe)? as usize;
        buf = &buf[n.min(buf.len())..];
    }
    Ok(())
}

fn recv(ring: &mut IoUring, fd: types::Fd, buf: &mut [u8]) -> Result<usize> {
    let sqe = opcode::Recv::new(fd, buf.as_mut_ptr(), buf.len() as u32).build();
    Ok(run_one(ring, &sqe)? as usize)
}

pub(super) fn serve(s: TcpStream, reply: &[u8], defer: bool) -> Result<String> {
    let (mut ring, note) = ring(defer)?;
    let fd = types::Fd(s.as_raw_fd());
    let mut logic = EchoLogic::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = recv(&mut ring, fd, &mut buf)?;
        if n == 0 {
            return Ok(note);
        }
        for _ in 0..logic.feed(&buf[..n])? {
            send_all(&mut ring, fd, reply)?;
        }
    }
}

pub(super) fn client(
    s: TcpStream,
    req: &[u8],
    total: usize,
    warmup: usize,
    h: &mut Histogram<u64>,
    defer: bool,
) -> Result<String> {
    let (mut ring, note) = ring(defer)?;
    let fd = types::Fd(s.as_raw_fd());
    let mut logic = EchoLogic::new();
    let mut buf = [0u8; 4096];
    for i in 0..total {
        let t = Instant::now();
        send_all(&mut ring, fd, req)?;
        loop {
            let n = recv(&mut ring, fd, &mut buf)?;
            if n == 0 {
                return Err(Error::Truncated {
                    pos: 0,
                    what: "server closed the connection early",
                });
            }
            if logic.reply_ready(&buf[..n])? {
                break;
            }
        }
        record(h, i, warmup, t);
    }
    drop(s);
    Ok(note)
}

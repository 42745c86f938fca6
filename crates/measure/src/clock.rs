//! CPU-time clocks, checked. A measurement must not count time the OS had
//! the thread descheduled (wall clocks do, and on a shared machine that
//! reaches milliseconds), and a failed clock read must not pass for zero
//! CPU: every read here returns the OS's error instead.
//!
//! Nanosecond clocks (`clock_gettime`), because `getrusage` is
//! tick-granular for short intervals.

use std::io;
use std::time::Duration;

/// Which CPU clock to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuClock {
    /// The calling thread's.
    Thread,
    /// The whole process's, every thread (including exited ones) included.
    Process,
    /// Another process's, from `clock_getcpuclockid` (see [`of_process`]).
    Of(libc::clockid_t),
}

impl CpuClock {
    fn id(self) -> libc::clockid_t {
        match self {
            CpuClock::Thread => libc::CLOCK_THREAD_CPUTIME_ID,
            CpuClock::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
            CpuClock::Of(id) => id,
        }
    }

    /// CPU time used so far on this clock.
    pub fn read(self) -> io::Result<Duration> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a timespec we own, written and not retained; an
        // invalid clock id is reported through the return value.
        if unsafe { libc::clock_gettime(self.id(), &mut ts) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Duration::new(
            u64::try_from(ts.tv_sec).unwrap_or(0),
            u32::try_from(ts.tv_nsec).unwrap_or(0),
        ))
    }
}

/// The CPU clock of process `pid` (a child we have not reaped, say), which
/// counts all its threads.
pub fn of_process(pid: u32) -> io::Result<CpuClock> {
    let pid =
        libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut id: libc::clockid_t = 0;
    // SAFETY: `id` is a clockid_t we own; the call only writes it.
    let rc = unsafe { libc::clock_getcpuclockid(pid, &mut id) };
    if rc != 0 {
        // It returns the error number rather than setting errno.
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(CpuClock::Of(id))
}

/// CPU time the calling thread has used. The thread clock exists on every
/// Linux since 2.6.12; a failure to read it is a broken system, not a
/// measurement, so it panics with the OS's reason.
pub fn thread_cpu() -> Duration {
    CpuClock::Thread
        .read()
        .unwrap_or_else(|e| panic!("reading CLOCK_THREAD_CPUTIME_ID: {e}"))
}

/// CPU time the whole process has used, every thread included. Panics as
/// [`thread_cpu`] does.
pub fn process_cpu() -> Duration {
    CpuClock::Process
        .read()
        .unwrap_or_else(|e| panic!("reading CLOCK_PROCESS_CPUTIME_ID: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_clock_advances_with_work_and_not_with_sleep() {
        let t0 = thread_cpu();
        std::thread::sleep(Duration::from_millis(30));
        let slept = thread_cpu() - t0;
        let t1 = thread_cpu();
        // Bounded by the wall clock, so a stuck CPU clock fails the test
        // instead of spinning for ever.
        let wall = std::time::Instant::now();
        let mut x = 0u64;
        while thread_cpu() - t1 < Duration::from_millis(5)
            && wall.elapsed() < Duration::from_secs(10)
        {
            x = x.wrapping_mul(31).wrapping_add(1);
        }
        std::hint::black_box(x);
        let worked = thread_cpu() - t1;
        assert!(
            worked >= Duration::from_millis(5),
            "10 s of spinning advanced the thread clock by only {worked:?}"
        );
        assert!(
            slept < Duration::from_millis(20),
            "sleeping used {slept:?} of CPU"
        );
        assert!(process_cpu() >= thread_cpu());
    }

    #[test]
    fn a_bad_clock_is_an_error_not_zero() {
        // Clock ids are small; this one names nothing.
        let err = CpuClock::Of(0x7fff_0000).read().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn another_process_clock_is_readable_and_a_missing_one_is_not() {
        let own = of_process(std::process::id()).unwrap().read().unwrap();
        assert!(own > Duration::ZERO);
        // pid_max is at most 2^22 on Linux.
        assert!(of_process(1 << 23).is_err());
    }
}

//! CPU-time clocks, for measurements that must not count time the OS had
//! the thread descheduled (wall clocks do, and on a shared machine that
//! reaches milliseconds).

use std::time::Duration;

/// CPU time the calling thread has used.
pub fn thread_cpu() -> Duration {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time the whole process has used, every thread included.
pub fn process_cpu() -> Duration {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// Nanosecond CPU clocks: `getrusage` is tick-granular for short intervals.
fn read(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; the clock id is one
    // of the two constants above, valid on every Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
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
}

//! Processes and ports of the tests that run servers: a child that is
//! always killed, and a loopback port nobody listens on.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A child process killed (and reaped) when the test ends, pass or fail: a
/// failed assertion must not leave a server listening, holding the test's
/// output pipe open.
pub struct Running(pub Child);

impl Running {
    /// Starts `cmd` in `dir` as a server: no stdin, stdout dropped, and
    /// stderr kept in `dir/stderr_file` for the test to read afterwards
    /// (a server's warnings and events).
    pub fn start_in(cmd: &mut Command, dir: &Path, stderr_file: &str) -> Running {
        let stderr = std::fs::File::create(dir.join(stderr_file))
            .unwrap_or_else(|e| panic!("creating {}: {e}", dir.join(stderr_file).display()));
        cmd.current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map(Running)
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"))
    }
}

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback port nobody listens on now, from outside the kernel's
/// ephemeral range, and never one this process was given before (see
/// [`perfkit_peers::port`]).
///
/// The tests of one binary run in parallel threads, and `cargo xtask ci`
/// runs two test executables at once. A port the kernel gave out for a
/// probe and took back could be given to the next probe, or to any
/// connection's local end, before the test's server bound it: its bind
/// then failed ("Address already in use"), or its test talked to another
/// test's server.
pub fn free_port() -> u16 {
    perfkit_peers::port::unclaimed().expect("a free loopback port")
}

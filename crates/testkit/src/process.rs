//! Processes and ports of the tests that run servers: a child that is
//! always killed, and a loopback port nobody listens on.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};

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

/// A loopback port nobody listens on now (one the kernel just gave out
/// and took back), and never one this process was given before.
///
/// The tests of one binary run in parallel threads, and the kernel may
/// give a port that was probed and closed to the next probe before the
/// first test's server has bound it. Two tests would then share the
/// port: one server fails to bind, and its test talks to the other
/// test's server until that one exits (`Connection refused` in the
/// middle of a test).
pub fn free_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("binding a loopback port");
        if GIVEN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(port)
        {
            return port;
        }
    }
}

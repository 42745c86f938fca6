//! Thread placement, read from the kernel: each line the engine gives
//! its console records the `Cpus_allowed_list` of the thread that wrote
//! it (`/proc/thread-self/status`), so the test sees where the acceptor's
//! thread, each session's connection thread and each initiator's thread
//! really ran, not where the engine says it put them. `--pin`'s setting
//! places every thread, a session's `PerfkitCpuAffinity` its own thread;
//! neither is the default; a core the process may not use is refused
//! before anything is opened.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fixcore::affinity::PinError;
use fixengine::assembly::{self, App, Console, EngineSettings, Listening, Warning};
use perfkit_testkit::fix_wire::{self as wire, has, read_message};
use perfkit_testkit::process::free_port;

/// The cores of a `Cpus_allowed_list` line (`0-3,6`), parsed here rather
/// than by the library under test.
fn cores_listed(list: &str) -> Vec<usize> {
    let mut ids = Vec::new();
    for part in list.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        ids.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    ids
}

/// The calling thread's cores, as the kernel reports them.
fn kernel_mask() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    cores_listed(list)
}

/// Each console line with the cores of the thread that wrote it.
#[derive(Default)]
struct Recorder {
    lines: Mutex<Vec<(String, Vec<usize>)>>,
}

impl Recorder {
    fn record(&self, line: String) {
        self.lines.lock().unwrap().push((line, kernel_mask()));
    }

    /// The cores of every thread that wrote a line holding `needle`.
    fn masks_of(&self, needle: &str) -> Vec<Vec<usize>> {
        let lines = self.lines.lock().unwrap();
        let mut masks: Vec<Vec<usize>> = lines
            .iter()
            .filter(|(l, _)| l.contains(needle))
            .map(|(_, m)| m.clone())
            .collect();
        masks.dedup();
        masks
    }

    /// Waits (up to 20 s) for a line holding `needle`.
    fn wait_for(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.masks_of(needle).is_empty() {
            assert!(Instant::now() < deadline, "no line with {needle:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Console for Recorder {
    fn screen(&self, line: &[u8]) {
        self.record(String::from_utf8_lossy(line).into_owned());
    }
    fn warn(&self, warning: Warning<'_>) {
        self.record(format!("warning: {warning:?}"));
    }
    fn notice(&self, text: &str) {
        self.record(format!("notice: {text}"));
    }
    fn listening(&self, l: Listening) {
        self.record(format!("listening on {}", l.port));
    }
    fn result(&self, line: &str) {
        self.record(format!("result: {line}"));
    }
    fn one_line(&self, err: &(dyn std::error::Error + 'static)) -> String {
        err.to_string()
    }
}

fn engine(settings: &Path, cores: Option<&str>) -> EngineSettings {
    EngineSettings {
        settings: settings.to_path_buf(),
        app: App::Echo,
        log: None,
        orders: None,
        latencies: None,
        window: 100,
        order_template: None,
        grace: Duration::from_secs(5),
        max_message: 1 << 20,
        spin: Duration::ZERO,
        send_queue_limit: 64 << 20,
        recover_store: false,
        tls: false,
        max_dynamic: 100,
        cpu_affinity: cores.map(|c| c.parse().unwrap()),
    }
}

/// An acceptor of ISLD on `port` for TW1 (with `tw1`'s
/// `PerfkitCpuAffinity` line, if any) and TW2, and templates for any
/// counterparty (with `tpl`'s).
fn acceptor_settings(dir: &Path, port: u16, tw1: &str, tpl: &str) -> std::path::PathBuf {
    let path = dir.join("acceptor.cfg");
    let text = format!(
        "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=ISLD\n\
         SocketAcceptPort={port}\nResetOnLogon=Y\nHeartBtInt=30\n\
         [SESSION]\nTargetCompID=TW1\n{tw1}\n\
         [SESSION]\nTargetCompID=TW2\n\
         [SESSION]\nTargetCompID=*\nAcceptorTemplate=Y\n{tpl}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Logs `who` on to the acceptor on `port`, waiting for its answer; the
/// connection stays up while the returned stream lives.
fn log_on(port: u16, who: &str) -> std::net::TcpStream {
    let mut c = wire::connect(port);
    c.write_all(&wire::frame_now(&format!(
        "35=A|34=1|49={who}|52=NOW|56=ISLD|98=0|108=30|141=Y|"
    )))
    .unwrap();
    let logon = read_message(&mut c).expect("a Logon back");
    assert!(has(&logon, "35=A"), "{logon:?}");
    c
}

/// Runs the acceptor of `settings` on a thread of its own; returns it
/// (it gives the mask its thread had before and after the run).
fn run_acceptor(
    engine: EngineSettings,
    stop: &'static AtomicBool,
    console: Arc<Recorder>,
) -> std::thread::JoinHandle<(Vec<usize>, Vec<usize>)> {
    std::thread::spawn(move || {
        let before = kernel_mask();
        assembly::run_acceptor(&engine, stop, console).unwrap();
        (before, kernel_mask())
    })
}

/// Two different cores this process may use (the same one twice on a
/// one-core machine, where placement cannot be told apart).
fn two_cores() -> (usize, usize) {
    let all = kernel_mask();
    (all[0], *all.last().unwrap())
}

#[test]
fn pinned_engine_threads_run_on_its_cores_and_a_sessions_key_on_its_own() {
    let (a, b) = two_cores();
    let all = kernel_mask();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let settings = acceptor_settings(
        dir.path(),
        port,
        &format!("PerfkitCpuAffinity={b}"),
        &format!("PerfkitCpuAffinity={b}"),
    );
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let console = Arc::new(Recorder::default());
    let server = run_acceptor(
        engine(&settings, Some(&a.to_string())),
        stop,
        console.clone(),
    );
    let _tw1 = log_on(port, "TW1");
    let _tw2 = log_on(port, "TW2");
    let _made = log_on(port, "TW3");
    for who in ["ISLD->TW1 :", "ISLD->TW2 :", "ISLD->TW3 :"] {
        console.wait_for(who);
    }
    stop.store(true, Ordering::SeqCst);
    let (before, after) = server.join().unwrap();
    assert_eq!(
        console.masks_of("listening on"),
        [vec![a]],
        "the acceptor's thread"
    );
    assert_eq!(
        console.masks_of("ISLD->TW1 :"),
        [vec![b]],
        "TW1's own cores"
    );
    assert_eq!(
        console.masks_of("ISLD->TW2 :"),
        [vec![a]],
        "TW2 on the engine's"
    );
    assert_eq!(
        console.masks_of("ISLD->TW3 :"),
        [vec![b]],
        "the template's cores"
    );
    assert_eq!(
        (before, after),
        (all.clone(), all),
        "the caller's mask is back"
    );
}

#[test]
fn threads_are_left_where_they_were_unless_asked() {
    let all = kernel_mask();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let settings = acceptor_settings(dir.path(), port, "", "");
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let console = Arc::new(Recorder::default());
    let server = run_acceptor(engine(&settings, None), stop, console.clone());
    let _tw1 = log_on(port, "TW1");
    let _made = log_on(port, "TW3");
    console.wait_for("ISLD->TW1 :");
    console.wait_for("ISLD->TW3 :");
    stop.store(true, Ordering::SeqCst);
    server.join().unwrap();
    for who in ["listening on", "ISLD->TW1 :", "ISLD->TW3 :"] {
        assert_eq!(console.masks_of(who), std::slice::from_ref(&all), "{who}");
    }
}

#[test]
fn an_initiators_session_thread_runs_on_its_cores() {
    let (a, b) = two_cores();
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens there: each session's thread says so in an event
    // line, from the thread itself.
    let closed = free_port();
    let settings = dir.path().join("initiator.cfg");
    std::fs::write(
        &settings,
        format!(
            "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=TW\n\
             SocketConnectHost=127.0.0.1\nSocketConnectPort={closed}\nHeartBtInt=30\n\
             ReconnectInterval=1\n\
             [SESSION]\nTargetCompID=ONE\nPerfkitCpuAffinity={b}\n\
             [SESSION]\nTargetCompID=TWO\n"
        ),
    )
    .unwrap();
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let console = Arc::new(Recorder::default());
    let run = {
        let console = console.clone();
        let engine = engine(&settings, Some(&a.to_string()));
        std::thread::spawn(move || assembly::run_initiator(&engine, stop, console).map(|_| ()))
    };
    console.wait_for("TW->ONE :");
    console.wait_for("TW->TWO :");
    stop.store(true, Ordering::SeqCst);
    run.join().unwrap().unwrap();
    assert_eq!(console.masks_of("TW->ONE :"), [vec![b]]);
    assert_eq!(console.masks_of("TW->TWO :"), [vec![a]]);
}

#[test]
fn a_core_the_process_may_not_use_is_refused_naming_it_before_anything_opens() {
    let all = kernel_mask();
    let missing = all.last().unwrap() + 1;
    let allowed = match all.as_slice() {
        [one] => one.to_string(),
        _ if all.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("{}-{}", all[0], all.last().unwrap())
        }
        _ => return, // a scattered mask: its list is not checked here
    };
    // Written as Linux lists them: a run of cores as a range.
    let asked = if missing == all[0] + 1 {
        format!("{}-{missing}", all[0])
    } else {
        format!("{},{missing}", all[0])
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let store = dir.path().join("store");
    let settings = acceptor_settings(
        dir.path(),
        port,
        &format!(
            "FileStorePath={}\nPerfkitCpuAffinity={},{missing}",
            store.display(),
            all[0]
        ),
        "",
    );
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let refused = |cores: Option<&str>| {
        let console = Arc::new(Recorder::default());
        let err = assembly::run_acceptor(&engine(&settings, cores), stop, console.clone())
            .expect_err("refused");
        assert!(console.masks_of("listening").is_empty(), "it listened");
        assert_eq!(kernel_mask(), all, "the caller's mask changed");
        // The cause is fixcore's typed refusal, naming the core.
        let cause = std::error::Error::source(&err).and_then(|c| c.downcast_ref::<PinError>());
        assert!(
            matches!(cause, Some(PinError::NotAllowed { core, .. }) if *core == missing),
            "{err:?}"
        );
        // In one line, as the binary renders a chain.
        let mut line = err.to_string();
        let mut next = std::error::Error::source(&err);
        while let Some(cause) = next {
            line.push_str(&format!(": {cause}"));
            next = cause.source();
        }
        line
    };
    assert_eq!(
        refused(Some(&format!("{missing}"))),
        format!(
            "placing the engine's threads on cores {missing}: core {missing} is not one this \
             process may run on (it may use {allowed})"
        )
    );
    assert_eq!(
        refused(None),
        format!(
            "{}: FIX.4.4:ISLD->TW1: PerfkitCpuAffinity={asked}: core {missing} is not one \
             this process may run on (it may use {allowed})",
            settings.display(),
        )
    );
    assert!(!store.exists(), "the store was opened");
}

#[test]
fn the_load_generators_sessions_warn_that_the_key_places_nothing() {
    let all = kernel_mask();
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("load.cfg");
    std::fs::write(
        &settings,
        format!(
            "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=TW\n\
             SocketConnectHost=127.0.0.1\nSocketConnectPort=1\nHeartBtInt=30\n\
             [SESSION]\nTargetCompID=ONE\n\
             [SESSION]\nTargetCompID=TWO\nPerfkitCpuAffinity={}\n",
            all[0]
        ),
    )
    .unwrap();
    let console = Recorder::default();
    let sessions = assembly::load_sessions(&settings, &console).unwrap();
    assert_eq!(sessions.len(), 2);
    let lines: Vec<String> = console
        .lines
        .lock()
        .unwrap()
        .iter()
        .map(|(l, _)| l.clone())
        .collect();
    assert_eq!(
        lines,
        [format!(
            "warning: Text({:?})",
            format!(
                "{}: FIX.4.4:TW->TWO: PerfkitCpuAffinity has no effect in the load generator, \
                 whose two threads serve every session",
                settings.display()
            )
        )]
    );
    assert_eq!(kernel_mask(), all, "nothing was placed");
}

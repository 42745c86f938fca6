//! The outside programs, C++ libraries and Python modules the
//! interoperability tests and the peer programs use, and how to install
//! them.

use std::process::{Command, Stdio};

use anyhow::{Result, bail};

/// A program the tests run, the argument that proves it works, and the
/// Debian package that provides it.
struct Program {
    name: &'static str,
    probe: &'static [&'static str],
    apt: &'static str,
}

/// A library a peer program links (`cargo xtask peers`), known to be
/// installed by one of its headers, and its Debian package.
struct Library {
    header: &'static str,
    apt: &'static str,
}

/// A Python module the tests import, and its PyPI package.
struct PyModule {
    module: &'static str,
    pip: &'static str,
}

const PROGRAMS: &[Program] = &[
    // zstdkit / perfkit compress: the reference CLI decodes our frames and we
    // decode its frames.
    Program {
        name: "zstd",
        probe: &["--version"],
        apt: "zstd",
    },
    // report: the HdrHistogram log reader cross-checks --hlog.
    Program {
        name: "python3",
        probe: &["--version"],
        apt: "python3",
    },
    // zipstream: real ZIP readers and writers check our archives and make
    // archives we must read.
    Program {
        name: "unzip",
        probe: &["-v"],
        apt: "unzip",
    },
    Program {
        name: "zip",
        probe: &["-v"],
        apt: "zip",
    },
    Program {
        name: "7zz",
        probe: &["i"],
        apt: "7zip",
    },
    Program {
        name: "bsdtar",
        probe: &["--version"],
        apt: "libarchive-tools",
    },
    // memory_growth: GNU time reads a command's peak RSS from a parent that
    // is not the test harness (whose own peak would carry into the child's).
    Program {
        name: "time",
        probe: &["--version"],
        apt: "time",
    },
    // perfkit man: the generated page must render.
    Program {
        name: "man",
        probe: &["--version"],
        apt: "man-db",
    },
    // Prompts and terminal checks are tested on a pseudo-terminal.
    Program {
        name: "script",
        probe: &["--version"],
        apt: "bsdutils",
    },
    // The peer programs are C++ and C (`cargo xtask peers`); Debian's g++
    // brings gcc, whose `cc` builds the load generator's floor.
    Program {
        name: "g++",
        probe: &["--version"],
        apt: "g++",
    },
    // fixengine's TLS tests make their certificates at test time.
    Program {
        name: "openssl",
        probe: &["version"],
        apt: "openssl",
    },
    // The QuickFIX/J peer: `cargo xtask peers` fetches its jars from Maven
    // Central with curl and compiles it with the JDK; its TLS tests put
    // the CA in a Java trust store with keytool.
    Program {
        name: "curl",
        probe: &["--version"],
        apt: "curl",
    },
    Program {
        name: "javac",
        probe: &["-version"],
        apt: "default-jdk-headless",
    },
    Program {
        name: "keytool",
        probe: &["-help"],
        apt: "default-jdk-headless",
    },
];

const LIBRARIES: &[Library] = &[
    // fixsession-postgres and the FIX failover tests: a real PostgreSQL
    // server, made and started by perfkit-testkit's harness (as the
    // `postgres` user when CI runs as root).
    Library {
        header: "/usr/lib/postgresql/15/bin/pg_ctl",
        apt: "postgresql",
    },
    // fix-bench's parse section: QuickFIX's validated parse, measured beside
    // fixcore's by the quickfix-parse peer.
    Library {
        header: "/usr/include/quickfix/Message.h",
        apt: "libquickfix-dev",
    },
    // fixsession's TimeZone setting reads the system's tz database; its tests
    // name zones such as America/New_York.
    Library {
        header: "/usr/share/zoneinfo/America/New_York",
        apt: "tzdata",
    },
    // quickfix-session's SSL modes link QuickFIX's SSL classes against
    // OpenSSL.
    Library {
        header: "/usr/include/openssl/ssl.h",
        apt: "libssl-dev",
    },
];

const PY_MODULES: &[PyModule] = &[
    // report: an independent HdrHistogram implementation reads our --hlog.
    PyModule {
        module: "hdrh",
        pip: "hdrhistogram",
    },
    // zipstream: WinZip AES archives are read and written by pyzipper.
    PyModule {
        module: "pyzipper",
        pip: "pyzipper",
    },
    // zipstream (feature s3) and `perfkit zip s3://`: moto's server mode is
    // the S3-compatible server the tests start on loopback.
    PyModule {
        module: "moto.server",
        pip: "moto[server]",
    },
];

fn program_ok(p: &Program) -> bool {
    Command::new(p.name)
        .args(p.probe)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn module_ok(m: &PyModule) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {}", m.module)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn missing() -> (Vec<&'static str>, Vec<&'static str>) {
    let apt = PROGRAMS
        .iter()
        .filter(|p| !program_ok(p))
        .map(|p| p.apt)
        .chain(
            LIBRARIES
                .iter()
                .filter(|l| !std::path::Path::new(l.header).is_file())
                .map(|l| l.apt),
        )
        .collect();
    let pip = PY_MODULES
        .iter()
        .filter(|m| !module_ok(m))
        .map(|m| m.pip)
        .collect();
    (apt, pip)
}

/// Makes sure every tool is there: installs what is missing when running as
/// root, and otherwise fails with the exact commands to run.
pub fn ensure() -> Result<()> {
    let (apt, pip) = missing();
    if apt.is_empty() && pip.is_empty() {
        return Ok(());
    }
    if is_root() {
        if !apt.is_empty() {
            super::run(Command::new("apt-get").arg("update").arg("-qq"))?;
            super::run(
                Command::new("apt-get")
                    .args(["install", "-y", "-qq", "--no-install-recommends"])
                    .args(&apt)
                    .env("DEBIAN_FRONTEND", "noninteractive"),
            )?;
        }
        if !pip.is_empty() {
            // A Debian-managed Python refuses a plain `pip install` (PEP
            // 668); CI machines are disposable, so retry with the override.
            let plain = super::run(
                Command::new("python3")
                    .args(["-m", "pip", "install", "-q"])
                    .args(&pip),
            );
            if plain.is_err() {
                super::run(
                    Command::new("python3")
                        .args(["-m", "pip", "install", "-q", "--break-system-packages"])
                        .args(&pip),
                )?;
            }
        }
    }
    let (apt, pip) = missing();
    if apt.is_empty() && pip.is_empty() {
        return Ok(());
    }
    let mut msg =
        String::from("the interoperability tests and peers need programs that are missing:");
    if !apt.is_empty() {
        msg.push_str(&format!("\n  apt-get install {}", apt.join(" ")));
    }
    if !pip.is_empty() {
        msg.push_str(&format!("\n  python3 -m pip install {}", pip.join(" ")));
    }
    bail!(msg)
}

/// cargo-fuzz's version `ci` installs when the machine has none: the
/// bounded fuzzing in `ci` runs under it, and a fresh machine has the
/// nightly toolchain but not this cargo subcommand.
pub const CARGO_FUZZ: &str = "0.13.2";

/// Installs cargo-fuzz [`CARGO_FUZZ`] from the crates.io registry, with
/// its own lock file.
pub fn install_cargo_fuzz() -> Result<()> {
    super::run(super::cargo().args([
        "install",
        "cargo-fuzz",
        "--locked",
        "--version",
        &format!("={CARGO_FUZZ}"),
    ]))
}

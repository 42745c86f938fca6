//! `cargo xtask peers`: builds the peer programs perfkit's benches run
//! beside their own code (see `perfkit::peer`; the names come from
//! `perfkit-peers`) into `target/peers/`.
//!
//! Each peer is one entry in [`PEERS`] with its own build function, so a
//! peer written in another language adds an entry, not a branch.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// A peer program and how to build it.
struct Peer {
    /// The file name `perfkit_peers::locate` looks for.
    name: &'static str,
    /// What it is measured against, for the usage text.
    what: &'static str,
    /// Builds it into the given directory.
    build: fn(&Path) -> Result<()>,
}

const PEERS: &[Peer] = &[
    Peer {
        name: perfkit_peers::QUICKFIX,
        what: "QuickFIX validated parse and session engine (fix-bench parse, session); needs g++ and libquickfix-dev",
        build: build_quickfix,
    },
    Peer {
        name: perfkit_peers::LOAD_FLOOR,
        what: "the FIX load generator's I/O in C, no FIX work (fix load's floor); needs a C compiler",
        build: build_floor,
    },
    Peer {
        name: perfkit_peers::ROUNDTRIP_FLOOR,
        what: "one order at a time over loopback in C, no FIX work (fix bench session's floor); needs a C compiler",
        build: build_roundtrip_floor,
    },
    Peer {
        name: perfkit_peers::QUICKFIXJ,
        what: "QuickFIX/J 2.3.2's initiator and acceptor (the FIX interop tests' second engine); needs curl and a JDK",
        build: build_quickfixj,
    },
    Peer {
        name: perfkit_peers::SZIP,
        what: "s-zip 0.15.0 on its default backend, miniz_oxide (perfkit bench --only zip)",
        build: build_szip,
    },
];

/// Where peers go: [`perfkit_peers::install_dir`], the one rule perfkit
/// also finds them by.
pub fn dir() -> PathBuf {
    perfkit_peers::install_dir()
}

/// Builds the peers named in `only` (all when empty).
pub fn build(only: &[String]) -> Result<()> {
    for name in only {
        if !PEERS.iter().any(|p| p.name == name) {
            bail!("no peer named {name}; peers: {}", usage());
        }
    }
    let out = dir();
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    for p in PEERS
        .iter()
        .filter(|p| only.is_empty() || only.iter().any(|o| o == p.name))
    {
        (p.build)(&out).with_context(|| format!("building peer {}", p.name))?;
        eprintln!("xtask: built {}", out.join(p.name).display());
    }
    Ok(())
}

/// The peers, one per line, for usage messages.
pub fn usage() -> String {
    PEERS
        .iter()
        .map(|p| format!("\n  {}: {}", p.name, p.what))
        .collect()
}

/// The QuickFIX parse and session peers and the dictionary the parse peer
/// loads (installed beside it, where perfkit looks for it).
///
/// Flags: `-O2` is what Debian builds libquickfix with, and nearly all the
/// timed work happens inside that library, so our own flags matter little;
/// no `-march=native`, as the library is built for baseline x86-64 either
/// way. `-std=gnu++14` because QuickFIX 1.15.1's headers still use dynamic
/// exception specifications (`throw(InvalidMessage)`), which C++17 removed;
/// `-Wno-deprecated` silences their warnings.
fn build_quickfix(out: &Path) -> Result<()> {
    let src = Path::new("xtask/peers/quickfix");
    // Compiled outside `out`: a half-written binary there is never found.
    let scratch = out.with_file_name("peers-build").join("quickfix");
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let compile = |source: &str, name: &str| -> Result<PathBuf> {
        let built = scratch.join(name);
        super::run(
            Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()))
                .args([
                    "-std=gnu++14",
                    "-O2",
                    "-DNDEBUG",
                    "-Wall",
                    "-Wextra",
                    "-Wno-deprecated",
                    // QuickFIX's SSL classes (Debian builds it with OpenSSL).
                    "-DHAVE_SSL=1",
                ])
                .arg(src.join(source))
                .arg("-o")
                .arg(&built)
                .args(["-lquickfix", "-lssl", "-lcrypto"]),
        )
        .with_context(|| {
            format!("compiling {source} (apt-get install g++ libquickfix-dev libssl-dev)")
        })?;
        Ok(built)
    };
    let built = compile("quickfix_parse.cpp", perfkit_peers::QUICKFIX)?;
    let session = compile("quickfix_session.cpp", perfkit_peers::QUICKFIX_SESSION)?;
    install(
        Source::File(&session),
        &out.join(perfkit_peers::QUICKFIX_SESSION),
    )?;
    install(
        Source::File(&src.join("FIX44-perfkit.xml")),
        &out.join(perfkit_peers::QUICKFIX_DICTIONARY),
    )?;
    record_quickfix_version(out)?;
    // Installed last: perfkit finds the peer by its executable, so it never
    // finds one whose dictionary or version file is missing.
    install(Source::File(&built), &out.join(perfkit_peers::QUICKFIX))
}

/// A jar from Maven Central: its path under the repository root and its
/// SHA-256 (checked against Central's own `.sha1` when pinned).
struct Jar {
    path: &'static str,
    sha256: &'static str,
}

/// QuickFIX/J 2.3.2 and what it needs at run time (its POM's compile
/// dependencies: MINA, SLF4J; slf4j-simple gives its log lines a home),
/// with the FIX 4.4 messages and dictionaries (`FIX44.xml`).
const QUICKFIXJ_JARS: &[Jar] = &[
    Jar {
        path: "org/quickfixj/quickfixj-core/2.3.2/quickfixj-core-2.3.2.jar",
        sha256: "c0d288aace96dac9c013e68087a41f35ad17dc9aafc3017c7ebefa89e3015c85",
    },
    Jar {
        path: "org/quickfixj/quickfixj-messages-fix44/2.3.2/quickfixj-messages-fix44-2.3.2.jar",
        sha256: "97cf4169f2c9c0ad83aa4edd3de9cb7febfb38af830313d0da642f92eeb3fe62",
    },
    Jar {
        path: "org/apache/mina/mina-core/2.2.4/mina-core-2.2.4.jar",
        sha256: "39b2dfc8e84380bf7adab657d3d5e1625cb6592a885ebdb854ec5c6f7a3ec88d",
    },
    Jar {
        path: "org/slf4j/slf4j-api/1.7.30/slf4j-api-1.7.30.jar",
        sha256: "cdba07964d1bb40a0761485c6b1e8c2f8fd9eb1d19c53928ac0d7f9510105c57",
    },
    Jar {
        path: "org/slf4j/slf4j-simple/1.7.30/slf4j-simple-1.7.30.jar",
        sha256: "8b9279cbff6b9f88594efae3cf02039b6995030eec023ed43928748c41670fee",
    },
];

const MAVEN_CENTRAL: &str = "https://repo1.maven.org/maven2";

/// The SHA-256 of a file, in hex.
fn sha256_hex(path: &Path) -> Result<String> {
    use sha2::Digest;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The jar, from the cache under `target/maven/` when it is there with the
/// pinned hash, else downloaded into it. A download with another hash is
/// refused and deleted, never used.
fn fetch_jar(jar: &Jar) -> Result<PathBuf> {
    let cache = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "target".into())
        .join("maven");
    let file = cache.join(jar.path);
    if file.is_file() && sha256_hex(&file)? == jar.sha256 {
        return Ok(file);
    }
    let dir = file.parent().expect("a jar path has folders");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let partial = file.with_extension("jar.partial");
    let url = format!("{MAVEN_CENTRAL}/{}", jar.path);
    super::run(
        Command::new("curl")
            .args(["--fail", "--silent", "--show-error", "--location"])
            .args(["--retry", "3", "--output"])
            .arg(&partial)
            .arg(&url),
    )
    .with_context(|| format!("downloading {url} (apt-get install curl)"))?;
    let got = sha256_hex(&partial)?;
    if got != jar.sha256 {
        let _ = std::fs::remove_file(&partial);
        bail!(
            "{url} has SHA-256 {got}, not the pinned {}; refusing it",
            jar.sha256
        );
    }
    std::fs::rename(&partial, &file).with_context(|| format!("writing {}", file.display()))?;
    Ok(file)
}

/// The QuickFIX/J peer: its jars fetched (pinned by SHA-256), our one Java
/// file compiled against them into a jar, all installed under
/// `quickfixj/` in the peer directory, and a launcher script naming them
/// by paths relative to itself, installed last.
fn build_quickfixj(out: &Path) -> Result<()> {
    let src = Path::new("xtask/peers/quickfixj/QuickfixjPeer.java");
    let scratch = out.with_file_name("peers-build").join("quickfixj");
    let classes = scratch.join("classes");
    if classes.exists() {
        std::fs::remove_dir_all(&classes)
            .with_context(|| format!("clearing {}", classes.display()))?;
    }
    std::fs::create_dir_all(&classes).with_context(|| format!("creating {}", classes.display()))?;
    let jars = QUICKFIXJ_JARS
        .iter()
        .map(fetch_jar)
        .collect::<Result<Vec<_>>>()?;
    let classpath = std::env::join_paths(&jars)?;
    super::run(
        Command::new("javac")
            .args(["-Xlint:all", "-Werror", "-d"])
            .arg(&classes)
            .arg("-cp")
            .arg(&classpath)
            .arg(src),
    )
    .context("compiling the QuickFIX/J peer (apt-get install default-jdk-headless)")?;
    let peer_jar = scratch.join("quickfixj-peer.jar");
    super::run(
        Command::new("jar")
            .arg("--create")
            .arg("--file")
            .arg(&peer_jar)
            .arg("-C")
            .arg(&classes)
            .arg("."),
    )?;
    let lib = out.join("quickfixj");
    std::fs::create_dir_all(&lib).with_context(|| format!("creating {}", lib.display()))?;
    let mut names = vec!["quickfixj-peer.jar".to_owned()];
    install(Source::File(&peer_jar), &lib.join("quickfixj-peer.jar"))?;
    for jar in &jars {
        let name = jar.file_name().expect("a jar has a name");
        install(Source::File(jar), &lib.join(name))?;
        names.push(name.to_string_lossy().into_owned());
    }
    let classpath: Vec<String> = names.iter().map(|n| format!("$lib/{n}")).collect();
    // The serial collector and C1 alone: the tests start the JVM a dozen
    // times, and startup, not peak speed, is what they wait for.
    let script = format!(
        "#!/bin/sh\n# QuickFIX/J 2.3.2 peer, built by `cargo xtask peers` from \
         xtask/peers/quickfixj.\nlib=\"$(dirname \"$0\")/quickfixj\"\n\
         exec \"${{JAVA_HOME:+$JAVA_HOME/bin/}}java\" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
         -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp \"{}\" QuickfixjPeer \"$@\"\n",
        classpath.join(":")
    );
    let launcher = scratch.join(perfkit_peers::QUICKFIXJ);
    std::fs::write(&launcher, script).with_context(|| format!("writing {}", launcher.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", launcher.display()))?;
    }
    install(Source::File(&launcher), &out.join(perfkit_peers::QUICKFIXJ))
}

/// The load generator's floor, one C file.
fn build_floor(out: &Path) -> Result<()> {
    build_c(out, "fixload_floor.c", perfkit_peers::LOAD_FLOOR)
}

/// The session round trip's floor, one C file.
fn build_roundtrip_floor(out: &Path) -> Result<()> {
    build_c(out, "roundtrip_floor.c", perfkit_peers::ROUNDTRIP_FLOOR)
}

/// A floor program from one C file of `xtask/peers/floor/`, installed in
/// `out` as `name`. `-O2` as the QuickFIX peers; a floor's timed work is
/// system calls, so flags matter little either way.
fn build_c(out: &Path, source: &str, name: &str) -> Result<()> {
    let src = Path::new("xtask/peers/floor").join(source);
    let scratch = out.with_file_name("peers-build").join("floor");
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let built = scratch.join(name);
    super::run(
        Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args([
                "-std=gnu11",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pthread",
            ])
            .arg(&src)
            .arg("-o")
            .arg(&built),
    )
    .with_context(|| format!("compiling {source} (apt-get install gcc)"))?;
    install(Source::File(&built), &out.join(name))
}

/// What [`install`] puts in place.
enum Source<'a> {
    /// A file's bytes and permissions (an executable stays executable).
    File(&'a Path),
    /// Bytes, in a file with the default permissions.
    Bytes(&'a [u8]),
}

/// Puts `src` at `dst` all at once: written to a temporary sibling, flushed
/// to disk and renamed over `dst`. A failed install leaves the previous
/// `dst` (or none), never a truncated file beside a working peer, and no
/// temporary file (an unpersisted `NamedTempFile` deletes itself on drop).
/// xtask does not link perfkit (whose `landing::Output` also covers
/// devices and fatal signals) so that it can run fmt and clippy before
/// anything compiles C; a peer directory holds regular files only.
fn install(src: Source<'_>, dst: &Path) -> Result<()> {
    let dir = match dst.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".xtask-").suffix(".partial");
    // A plain File::create's mode (0666 less the umask), not tempfile's
    // private 0600: the dictionary and version file are read by others.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    let file = tmp.as_file_mut();
    match src {
        Source::File(from) => {
            let mut f =
                std::fs::File::open(from).with_context(|| format!("opening {}", from.display()))?;
            std::io::copy(&mut f, file).with_context(|| format!("copying {}", from.display()))?;
            let perms = f
                .metadata()
                .with_context(|| format!("reading {}", from.display()))?
                .permissions();
            file.set_permissions(perms).context("setting permissions")?;
        }
        Source::Bytes(bytes) => {
            file.write_all(bytes)
                .with_context(|| format!("writing {}", dst.display()))?;
        }
    }
    file.sync_all()
        .with_context(|| format!("writing {}", dst.display()))?;
    tmp.persist(dst)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", dst.display()))?;
    Ok(())
}

/// Writes the version of the QuickFIX package the peer was built against
/// to `quickfix-parse.version` beside it, where fix-bench reads it for its
/// note: QuickFIX's headers carry no version macro, and Debian's pkg-config
/// file says 1.14.3 for the 1.15.1 package. Without dpkg (not Debian) the
/// file is removed and fix-bench says the version was not recorded.
fn record_quickfix_version(out: &Path) -> Result<()> {
    let file = out.join(perfkit_peers::QUICKFIX_VERSION_FILE);
    let version = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", "libquickfix-dev"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|v| !v.is_empty() && !v.contains('\n'));
    match version {
        Some(v) => install(Source::Bytes(format!("{v}\n").as_bytes()), &file),
        None => match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("removing {}", file.display()))
            }
            _ => Ok(()),
        },
    }
}

/// The s-zip peer's package, its own workspace.
const SZIP_MANIFEST: &str = "xtask/peers/szip/Cargo.toml";

/// Where the s-zip peer is built: its own target directory beside the
/// peers, outside ours.
fn szip_target(out: &Path) -> PathBuf {
    out.with_file_name("peers-build")
}

/// s-zip on its own default flate2 backend. It is a package with its own
/// `[workspace]`, built into its own target directory: inside ours, cargo
/// would unify flate2's features with zipstream's and hand it zlib-rs.
///
/// The resolved graph is checked for the backend the rows are labelled
/// with, so a dependency that turned zlib-rs on cannot go unnoticed; then
/// only the release build runs (fat LTO: one full link). Its fmt, clippy and
/// tests are [`check_szip`]'s, which `cargo xtask ci` runs.
fn build_szip(out: &Path) -> Result<()> {
    let manifest = Path::new(SZIP_MANIFEST);
    let target = szip_target(out);
    let tree = super::cargo()
        .args([
            "tree",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .context("running cargo tree")?;
    if !tree.status.success() {
        bail!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&tree.stderr)
        );
    }
    let tree = String::from_utf8_lossy(&tree.stdout);
    let has = |krate: &str| tree.lines().any(|l| l.starts_with(&format!("{krate} v")));
    if !has("miniz_oxide") {
        bail!("s-zip's peer does not link miniz_oxide, its default backend");
    }
    if let Some(other) = ["libz-rs-sys", "zlib-rs", "libz-sys", "libz-ng-sys"]
        .into_iter()
        .find(|k| has(k))
    {
        bail!("s-zip's peer links {other}: flate2 is not on its default backend");
    }
    super::run(
        super::cargo()
            .args(["build", "--locked", "--release", "--manifest-path"])
            .arg(manifest)
            .arg("--target-dir")
            .arg(&target),
    )?;
    install(
        Source::File(&target.join("release/szip-peer")),
        &out.join(perfkit_peers::SZIP),
    )
}

/// The s-zip peer's fmt, clippy and unit tests (the protocol perfkit drives
/// it with, and its clocks), for `cargo xtask ci`: the main workspace's fmt
/// and clippy do not see it. Clippy and the tests use the dev profile, in
/// the peer's own target directory, so they cost no second LTO link.
pub fn check_szip() -> Result<()> {
    let manifest = Path::new(SZIP_MANIFEST);
    let target = szip_target(&dir());
    super::run(
        super::cargo()
            .args(["fmt", "--manifest-path"])
            .arg(manifest)
            .args(["--", "--check"]),
    )?;
    let dev = |step: &str| {
        let mut c = super::cargo();
        c.args([step, "--locked", "--manifest-path"])
            .arg(manifest)
            .arg("--target-dir")
            .arg(&target);
        c
    };
    super::run(dev("clippy").args(["--all-targets", "--", "-D", "warnings"]))?;
    super::run(&mut dev("test"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files in `dir`, sorted.
    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn install_replaces_whole_files_and_leaves_no_temporary_behind() {
        let dir = std::env::temp_dir().join(format!("xtask-install-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dst = dir.join("peer");

        install(Source::Bytes(b"one\n"), &dst).unwrap();
        install(Source::Bytes(b"two\n"), &dst).unwrap();
        assert_eq!(std::fs::read(&dst).unwrap(), b"two\n");

        let exe = dir.join("built");
        std::fs::write(&exe, b"#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            install(Source::File(&exe), &dst).unwrap();
            let mode = std::fs::metadata(&dst).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o755, "{mode:o}");
        }
        #[cfg(not(unix))]
        install(Source::File(&exe), &dst).unwrap();
        assert_eq!(std::fs::read(&dst).unwrap(), b"#!/bin/sh\n");

        // A failed install leaves the previous file and nothing else.
        assert!(install(Source::File(&dir.join("missing")), &dst).is_err());
        assert_eq!(std::fs::read(&dst).unwrap(), b"#!/bin/sh\n");
        assert_eq!(listing(&dir), ["built", "peer"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

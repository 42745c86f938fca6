//! Links the release binary with its debug sections compressed.
//!
//! A release build keeps line tables for perfkit's own crates (the
//! workspace's release profile), so a user's backtrace names files and
//! lines. Uncompressed they are over half the installed binary (about
//! 26 MB of 42); zlib-compressed they stay readable by Rust's own
//! backtraces, gdb, addr2line and perf, and the binary is about 24 MB.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    // PROFILE is "release" for the release profile and those inheriting it.
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    if linux && release {
        println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
}

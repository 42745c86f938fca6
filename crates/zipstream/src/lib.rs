//! zipstream: a streaming ZIP reader and writer, sync and async, in constant
//! memory — stored, deflate and zstd entries, ZIP64, and WinZip AES.
//!
//! This crate is being built under the zipstream issue; it holds no code yet.

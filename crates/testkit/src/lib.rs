//! What the workspace's tests share, written independently of the crates
//! they test (this crate depends on none of them), so each piece can serve
//! as an oracle or as plumbing for any of them:
//!
//! - [`interop`]: the one gate for tests that need an outside program
//!   (`zstd`, `unzip`, Python…): a missing program fails the test unless
//!   `PERFKIT_SKIP_INTEROP=1` is set, and then the test says it is skipped;
//! - [`s3`]: a real S3-compatible server (moto) on a free local port;
//! - [`postgres`]: a real PostgreSQL server in a temporary cluster on a
//!   free loopback port, `perfkit_peers::postgres` gated for tests;
//! - [`noise`]: incompressible deterministic test data;
//! - [`boolean_text`]: an evaluator of `parN`/`and`/`or`/`not` text, the
//!   BE-Tree tests' brute-force reference;
//! - [`fix_wire`]: FIX framing and timestamps computed by plain arithmetic,
//!   and QuickFIX's own dictionaries fetched once;
//! - [`alloc_count`]: a counting global allocator, the oracle of the
//!   no-allocation tests;
//! - [`process`]: a child process killed when the test ends, and a free
//!   loopback port, for tests that run servers.
//!
//! A dev-dependency only; nothing here ships in the binary.
//!
//! ```
//! use perfkit_testkit::{boolean_text, noise::noise};
//! assert!(boolean_text::eval("par1 and not (par2 or par3)", &[true, false, false]));
//! assert_eq!(noise(100, 7), noise(100, 7));
//! ```

pub mod alloc_count;
pub mod boolean_text;
pub mod fix_wire;
pub mod interop;
pub mod mutation;
pub mod noise;
pub mod postgres;
pub mod process;
pub mod s3;

//! fixcore: the FIX tag=value hot path — SIMD field scanner, zero-copy
//! parser, builder, resend ring, deferred processor, core pinning and
//! dictionary validation. The session machine, its stores and settings
//! are the `fixsession` crate's; the TCP and TLS drivers and the engine
//! the `fixengine` crate's. What times them lives in `perfkit-bench`.
//!
//! - [`scan`]: every `=` and SOH offset in one pass (scalar / AVX2 /
//!   AVX-512 / AVX-512 VBMI2, chosen at run time; [`scan::ScanPath::cap`]
//!   caps it);
//! - [`parse`]: validating zero-copy [`parse::Message`] with O(1) tag
//!   access, typed getters ([`value`]) and repeating groups ([`groups`]);
//! - [`frame`]: splits a byte stream into messages, resynchronising after
//!   garbage; [`input`] reads a whole input (a stream or `|` lines) in
//!   bounded chunks through it;
//! - [`build`]: [`build::MessageBuilder`] for FIX 4.0–4.4 and FIXT.1.1,
//!   whose [`version::BeginString`] every FIX crate shares;
//! - [`dictionary`]: QuickFIX XML data dictionaries
//!   ([`dictionary::validate`] checks whole messages against them);
//! - [`resend`], [`deferred`], [`affinity`]: the resend ring, SPSC
//!   hand-off to a worker, thread pinning;
//!
//! Untrusted bytes never panic: every rejection is an [`Error`] naming the
//! byte position. To run the tests on each scan path of this CPU:
//! `FIXCORE_SCAN=scalar cargo test -p fixcore` (and `avx2`, `avx512`; a
//! test build turns on the `scan-cap-env` feature that reads it); the
//! property tests also compare every available path with a plain filter
//! in-process.
//!
//! ```
//! use fixcore::{build::MessageBuilder, parse::Parser, version::BeginString};
//!
//! let mut b = MessageBuilder::new(BeginString::Fix44);
//! b.begin(b"D");
//! b.header_str(49, "BUYER").header_str(56, "SELLER").header_uint(34, 7);
//! b.field_str(55, "MSFT").field_char(54, b'1').field_int(38, 100);
//! let bytes = b.finish().unwrap().to_vec();
//!
//! let mut parser = Parser::new();
//! let msg = parser.parse(&bytes).unwrap();
//! assert_eq!(msg.msg_type(), b"D");
//! assert_eq!(msg.int(38).unwrap(), 100);
//! assert_eq!(msg.str(55).unwrap(), "MSFT");
//! ```

pub mod affinity;
pub mod deferred;
mod error;
pub mod scan;

pub use error::{Error, Result};
pub mod build;
pub mod dictionary;
pub mod frame;
#[doc(hidden)]
pub mod fuzzing;
pub mod groups;
pub mod input;
pub mod parse;
pub mod resend;
#[cfg(any(test, feature = "samples"))]
pub mod sample;
pub mod value;
pub mod version;

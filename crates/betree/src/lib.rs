//! betree: the BE-Tree boolean-expression index (Sadoghi & Jacobsen, SIGMOD
//! 2011) with its expression language and a cooperative search that counts
//! its work in reductions.
//!
//! This crate is being built under the betree issue; it holds no code yet.

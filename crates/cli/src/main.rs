//! The `perfkit` binary.

fn main() {}

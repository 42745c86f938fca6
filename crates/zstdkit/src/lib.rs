//! zstdkit: zstd with named recipes, reusable contexts, streaming with flush
//! modes, tokio adapters and a per-call inline-or-offload budget.

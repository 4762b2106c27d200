//! Benchmarks (see issue 6).

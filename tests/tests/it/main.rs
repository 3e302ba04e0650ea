//! The workspace's integration tests, in one binary: tools collected at link time from two
//! crates (the examples and this crate's library), their catalogs against golden files, and the
//! seed's shapes. The compile-time behaviour of `#[tool]` is the `ui` binary (trybuild).

pub mod catalog;
pub mod registry;
pub mod seed_shapes;

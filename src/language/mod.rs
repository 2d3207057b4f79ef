//! The language: YAML to validated scenarios (`dsl`), expectations judged (`assert`).
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `dsl`
//! 1. `assert`

pub mod assert;
pub mod dsl;

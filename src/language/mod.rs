//! The language: YAML to validated scenarios (`dsl`), contract rules files and the change
//! kinds they name (`contract_rules`; judged by `run::contract::rules`), expectations judged
//! (`assert`).
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `contract_rules`
//! 1. `dsl`
//! 2. `assert`

pub mod assert;
pub mod contract_rules;
pub mod dsl;

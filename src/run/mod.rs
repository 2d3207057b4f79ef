//! The run: transports × eras (`client`), contracts, arguments from schemas, remote packs, the engine, evals beside it.
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `argsgen`, `client`, `packs`
//! 1. `contract`, `eval`, `record`
//! 2. `engine`
//! 3. `load`

pub mod argsgen;
pub mod client;
pub mod contract;
pub mod engine;
pub mod eval;
pub mod load;
pub mod packs;
pub mod record;

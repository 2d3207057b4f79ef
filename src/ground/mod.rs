//! The ground: console output, JSON, the YAML front end, input errors with positions, masking, bounded regexes and schemas, system calls, signals, TLS.
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `csv`, `files`, `json`, `output`, `platform`, `redact`, `tls`
//! 1. `signals`, `source`
//! 2. `load_error`
//! 3. `bounds`, `yaml`

#[macro_use]
pub mod output;
pub mod bounds;
pub mod csv;
pub mod files;
pub mod json;
pub mod load_error;
pub mod platform;
pub mod redact;
pub mod signals;
pub mod source;
pub mod tls;
pub mod yaml;

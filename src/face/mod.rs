//! The face: the command line, configuration, selection, baselines, the last run, one file per command (`app`).
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `baseline`, `cli`, `select`
//! 1. `config`
//! 2. `last_run`
//! 3. `app`

pub mod app;
pub mod baseline;
pub mod cli;
pub mod config;
pub mod last_run;
pub mod select;

//! The results: what went over the wire, the result vocabulary (level, failure, outcome), the one JUnit writer, the result of a run and its reports.
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `exchange`, `junit`, `outcome`
//! 1. `report`

pub mod exchange;
pub mod junit;
pub mod outcome;
pub mod report;

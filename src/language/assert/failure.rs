//! The record of an expectation that did not hold: made here, carried by the step
//! results, printed by the reports (defined with the rest of the result vocabulary).

pub use crate::results::outcome::{Failure, Finding};

//! Load errors live at the ground floor ([`crate::load_error`]): every input file (config,
//! baseline, contract rules) reports through them, not only the DSL's.

pub use crate::load_error::*;

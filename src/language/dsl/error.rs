//! Load errors live at the ground floor ([`crate::ground::load_error`]): every input file (config,
//! baseline, contract rules) reports through them, not only the DSL's.

pub use crate::ground::load_error::*;

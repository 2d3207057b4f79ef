//! Positioned values are the YAML front end's ([`crate::ground::yaml::value`]); re-exported here
//! for the DSL's modules.

pub use crate::ground::yaml::value::*;

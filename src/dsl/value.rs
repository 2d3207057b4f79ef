//! Positioned values are the YAML front end's ([`crate::yaml::value`]); re-exported here
//! for the DSL's modules.

pub use crate::yaml::value::*;

//! The scenario DSL: typed model (source of truth for the JSON Schema), loading with
//! positions, validation, and templates.
//!
//! Imports run one way, bottom to top: [`model`], [`scope`], [`params`], [`template`],
//! [`discover`] (which files a path names) → [`scenario`] (the compiled types) →
//! `compile` (one document → a [`Scenario`]) → [`pack`] (import graph, parameter values)
//! → [`load`] (the entry points). YAML itself is read by [`crate::yaml`].

pub mod builtin;
mod compile;
pub mod discover;
pub mod error;
pub mod limits;
pub mod load;
pub mod model;
pub mod pack;
pub mod params;
pub mod scenario;
pub mod scope;
pub mod template;
pub mod value;

pub use error::{LoadError, LoadErrors};
pub use scenario::*;

/// The DSL's JSON Schema (draft 2020-12), generated from [`model::ScenarioDoc`].
pub fn scenario_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(model::ScenarioDoc);
    serde_json::to_value(schema).expect("schema serializes")
}

/// The pack manifest's JSON Schema (`schema/pack.schema.json`), from [`model::PackDoc`].
pub fn pack_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(model::PackDoc);
    serde_json::to_value(schema).expect("schema serializes")
}

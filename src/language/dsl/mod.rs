//! The scenario DSL: typed model (source of truth for the JSON Schema), loading with
//! positions, validation, and templates.
//!
//! Imports run one way, bottom to top: [`document`], [`scope`], [`params`], [`template`],
//! [`discover`] (which files a path names) → [`scenario`] (the compiled types) →
//! `compile` (one document → a [`Scenario`]) → [`pack`] (import graph, parameter values)
//! → [`load`] (the entry points). YAML itself is read by [`crate::ground::yaml`].
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `builtin`, `limits`, `workload`
//! 1. `discover`, `document`, `template`
//! 2. `params`, `scope`
//! 3. `scenario`
//! 4. `compile`
//! 5. `pack`
//! 6. `load`

pub mod builtin;
mod compile;
pub mod discover;
pub mod document;
pub mod limits;
pub mod load;
pub mod pack;
pub mod params;
pub mod scenario;
pub mod scope;
pub mod template;
pub mod workload;

pub use compile::{
    compile_client, compile_expectation, compile_load_profile, compile_sanitizers,
    is_variable_name, parse_scenario,
};
pub use scenario::{
    Action, Answer, ClientScript, ElicitReply, GroupCall, LiveEach, PathExpr, Requires, Roots,
    SamplingReply, Scenario, Step, Steps, TaskRun,
};

/// The DSL's JSON Schema (draft 2020-12), generated from [`document::ScenarioDoc`].
pub fn scenario_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(document::ScenarioDoc);
    serde_json::to_value(schema).expect("schema serializes")
}

/// The pack manifest's JSON Schema (`schema/pack.schema.json`), from [`document::PackDoc`].
pub fn pack_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(document::PackDoc);
    serde_json::to_value(schema).expect("schema serializes")
}

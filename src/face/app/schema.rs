//! The JSON Schemas `mcpspec schema` prints and `schema/` commits, each generated from the
//! Rust types that read the files it describes.

use crate::face::cli::{SchemaKind, exit};
use crate::language::dsl;

/// `mcpspec schema KIND`: the schema on stdout.
pub(super) fn print(kind: SchemaKind) -> i32 {
    outln!(
        "{}",
        match kind {
            SchemaKind::Scenario => schema_text(),
            SchemaKind::Rules => rules_schema_text(),
            SchemaKind::Config => config_schema_text(),
            SchemaKind::Pack => pack_schema_text(),
            SchemaKind::Evalset => evalset_schema_text(),
        }
    );
    exit::OK
}

/// The eval set schema as committed in `schema/evalset.schema.json`.
pub fn evalset_schema_text() -> String {
    serde_json::to_string_pretty(&crate::run::eval::set::schema()).expect("schema serializes")
}

/// The DSL schema as committed in `schema/scenario.schema.json`.
pub fn schema_text() -> String {
    serde_json::to_string_pretty(&dsl::scenario_schema()).expect("schema serializes")
}

/// The pack manifest schema as committed in `schema/pack.schema.json`.
pub fn pack_schema_text() -> String {
    serde_json::to_string_pretty(&dsl::pack_schema()).expect("schema serializes")
}

/// The project configuration schema as committed in `schema/config.schema.json`.
pub fn config_schema_text() -> String {
    let schema = schemars::schema_for!(crate::face::config::ConfigDoc);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

/// The contract rules schema as committed in `schema/rules.schema.json`.
pub fn rules_schema_text() -> String {
    let schema = schemars::schema_for!(crate::language::contract_rules::RulesDoc);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

//! Evals: an eval set (YAML) run through a model against the server, and a paired comparison
//! of two such runs. Sits beside the engine: eval set (dsl) → client (tools) + model client →
//! results → compare → report.

pub mod affected;
pub mod agent;
pub mod compare;
pub mod compare_output;
pub mod critics;
pub mod judge;
pub mod llm;
pub mod names;
pub mod record;
pub mod replay;
pub mod report;
pub mod results;
pub mod run;
pub mod runs;
pub mod set;
pub mod stats;
pub mod tape;

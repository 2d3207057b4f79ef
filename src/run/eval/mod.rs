//! Evals: an eval set (YAML) run through a model against the server, and a paired comparison
//! of two such runs. Sits beside the engine: eval set (dsl) → client (tools) + model client →
//! results → compare → report.
//!
//! The files import one another without a circle (`tests/layers.rs`), lowest first:
//! `results`, `caps`, `retry`, `stats`, `names`, `fence`, `breaker`, `set::doc` (the document as written);
//! `conversation` (the API-neutral turn types), `profile`; `wire`, `record`, `replay_match`,
//! `replay`, `tape`, `critics`, `set`; `llm` (the client, which plays its turns on its tape);
//! `judge`, `agent`, `sampling`; `run`; `expect` (expectations captured from results);
//! the reports `report`, `report_html`, `compare_output`, `compare_view`, `compare_html`,
//! `compare_markdown`. A type
//! two files share goes down to a file both import, never into one of them.

pub mod affected;
pub mod agent;
pub mod breaker;
pub mod caps;
pub mod compare;
pub mod compare_html;
pub mod compare_markdown;
pub mod compare_output;
pub mod compare_view;
pub mod conversation;
pub mod critics;
pub mod estimate;
pub mod expect;
pub mod fence;
pub mod judge;
pub mod llm;
pub mod names;
pub mod profile;
pub mod record;
pub mod replay;
pub mod replay_match;
pub mod report;
pub mod report_html;
pub mod results;
pub mod retry;
pub mod run;
pub mod runs;
pub mod sampling;
pub mod sampling_tape;
pub mod set;
pub mod stats;
pub mod tape;
pub mod wire;

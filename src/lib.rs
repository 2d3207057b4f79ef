//! mcpspec: a declarative test engine for MCP servers.
//!
//! The source tree stands on floors, one folder each (`ls src`), bottom up. A file
//! imports only from its own floor or a lower one, and inside a floor the same holds for
//! the layers its `mod.rs` lists; no files import each other in a circle (`tests/layers.rs`
//! holds the tree to these lists):
//!
//! 0. `protocol` — spec facts: methods, the JSON-RPC envelope, list kinds, result fields, `_meta` keys, headers, error codes, the rule of each check per revision, the eras, the message schemas
//! 1. `ground` — the ground: console output, JSON, the YAML front end, input errors with positions, masking, bounded regexes and schemas, system calls, signals, TLS, contract rules files
//! 2. `results` — the results: what went over the wire, the result vocabulary (level, failure, outcome), the one JUnit writer, the result of a run and its reports
//! 3. `language` — the language: YAML to validated scenarios (`dsl`), expectations judged (`assert`)
//! 4. `run` — the run: transports × eras (`client`), contracts, arguments from schemas, remote packs, the engine, evals beside it
//! 5. `face` — the face: the command line, configuration, selection, baselines, the last run, one file per command (`app`)

// First: its macros (`outln!`, `errln!`, …) are used by every floor above it.
#[macro_use]
pub mod ground;
pub mod face;
pub mod language;
pub mod protocol;
pub mod results;
pub mod run;

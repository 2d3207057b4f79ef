//! mcpspec: a declarative test engine for MCP servers.
//!
//! A run: [`dsl`] loads YAML into validated scenarios; the [`engine`] drives each one
//! through a [`client`] connection (transports × eras), judges what came back with
//! [`assert`] and fills the [`report`] model; [`app`] renders the reports (console, JUnit,
//! JSON) and turns the result into the exit code.
//!
//! The modules are layered. A module imports only from its own layer or a lower one, and no
//! two modules import each other (`tests/layers.rs` derives the picture from the `use
//! crate::` lines and holds it to this list), bottom up:
//!
//! 0. `output`, `protocol`, `json`, `yaml`, `load_error`, `contract_rules`, `exchange`, `outcome`, `junit`, `source`, `redact`, `bounds`, `era`, `platform`, `signals`, `tls`
//!    — the ground floor: spec facts, JSON, the YAML front end, input errors
//!    with positions, contract rules files and change kinds, what went over the wire, the result
//!    vocabulary (level, failure, outcome), the one JUnit writer, positions, masking, bounded regexes and schemas,
//!    every platform difference (process groups, pipes, signals), the TLS provider.
//! 1. `dsl` — YAML to validated scenarios.
//! 2. `assert` — expectations judged against one exchange.
//! 3. `wire`, `client` — message schemas; transports × eras.
//! 4. `contract`, `argsgen`, `packs` — snapshots and their comparison; arguments from schemas;
//!    remote packs, the lockfile and the cache.
//! 5. `report` — the result model and its renderers.
//! 6. `engine` — steps, captures, built-in checks.
//! 7. `baseline`, `select`, `cli`, `config`, `last_run`, `eval` — what a run is asked to do;
//!    evals beside the engine (eval sets through a model, paired comparison).
//! 8. `app` — one file per command.

// First: its macros (`outln!`, `errln!`, …) are used by every module below.
#[macro_use]
pub mod output;

// The ground floor, imported by everything else and importing nothing above it: spec
// facts, input errors with positions, the one YAML front end.
/// Contract rules files and the change kinds (read here; judged by `contract::rules`).
pub mod contract_rules;
pub mod load_error;
pub mod protocol;
pub mod yaml;

pub mod app;
pub mod argsgen;
pub mod assert;
pub mod baseline;
pub mod bounds;
pub mod cli;
pub mod client;
pub mod config;
pub mod contract;
pub mod dsl;
pub mod engine;
pub mod era;
pub mod eval;
pub mod exchange;
pub mod json;
pub mod junit;
pub mod last_run;
pub mod outcome;
pub mod packs;
pub mod platform;
pub mod redact;
pub mod report;
pub mod select;
pub mod signals;
pub mod source;
pub mod tls;
pub mod wire;

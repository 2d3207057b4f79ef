//! mcpspec: a declarative test engine for MCP servers.
//!
//! Data flows one way: [`dsl`] (YAML → validated scenarios) → [`client`] (transports ×
//! eras) → [`engine`] (steps, captures) → [`assert`] (expectations) → [`report`]
//! (console, JUnit, JSON) → exit code ([`app`]).

// First: its macros (`outln!`, `errln!`, …) are used by every module below.
#[macro_use]
pub mod output;

// The ground floor: spec facts everything else imports.
pub mod protocol;

pub mod app;
pub mod argsgen;
pub mod assert;
pub mod baseline;
pub mod cli;
pub mod client;
pub mod config;
pub mod contract;
pub mod dsl;
pub mod engine;
pub mod era;
pub mod eval;
pub mod init;
pub mod last_run;
pub mod redact;
pub mod report;
pub mod select;
pub mod signals;
pub mod source;
#[cfg(unix)]
pub mod sys;
pub mod wire;

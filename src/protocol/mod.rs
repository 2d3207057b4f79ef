//! The bottom floor: facts of the MCP specification, each stated once.
//!
//! Method names, the JSON-RPC envelope, the paginated list kinds (method, result key, item id,
//! capability, snapshot file), result field names and accessors (`fields`), `_meta` keys, HTTP header names, error codes, and the rule each built-in check enforces per revision
//! (`rules`). Every other module takes these facts
//! from here instead of retyping a string; this module imports nothing of mcpspec's.
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `elicitation`, `era`, `errors`, `fields`, `headers`, `jsonrpc`, `meta`, `methods`, `rules`, `tasks`
//! 1. `lists`, `wire`

pub mod elicitation;
pub mod era;
pub mod errors;
pub mod fields;
pub mod headers;
pub mod jsonrpc;
pub mod lists;
pub mod meta;
pub mod methods;
pub mod rules;
pub mod tasks;
pub mod wire;

pub use lists::ListKind;

//! The ground floor: facts of the MCP specification, each stated once.
//!
//! Method names, the JSON-RPC envelope, the paginated list kinds (method, result key, item id,
//! capability, snapshot file), result field names and accessors (`results`), `_meta` keys, HTTP header names, error codes, and the rule each built-in check enforces per revision
//! (`rules`). Every other module takes these facts
//! from here instead of retyping a string; this module imports nothing of mcpspec's.

pub mod errors;
pub mod headers;
pub mod jsonrpc;
pub mod lists;
pub mod meta;
pub mod methods;
pub mod results;
pub mod rules;

pub use lists::ListKind;

//! The JSON-RPC 2.0 envelope every MCP message wears: built here, once.

use serde_json::{Map, Value, json};

/// The envelope's version member: `"jsonrpc": "2.0"`.
pub const JSONRPC: &str = "jsonrpc";
pub const VERSION: &str = "2.0";

/// A request (with `id`) or a notification (without): `jsonrpc`, `id`, `method`, `params`
/// in that order.
pub fn message(method: &str, params: Option<Value>, id: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert(JSONRPC.into(), json!(VERSION));
    if let Some(id) = id {
        m.insert("id".into(), id);
    }
    m.insert("method".into(), json!(method));
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

/// An error response to the request `id`.
pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({ JSONRPC: VERSION, "id": id, "error": { "code": code, "message": message } })
}

/// A result response to the request `id`.
pub fn result_response(id: &Value, result: Value) -> Value {
    json!({ JSONRPC: VERSION, "id": id, "result": result })
}

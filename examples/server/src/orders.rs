//! `--orders`: a producer that mints a handle under its own key and a read-only consumer
//! that takes it by that name — `create_order` returns `structuredContent.order_ref` (a
//! random value the server made, not an echoed argument), `get_order` takes `order_ref`.
//! mcpspec's `handles_bound_to_user` infers the consumer from the key's name; an order
//! is readable by the user who created it only (`unbound-handles`: by anyone).

use std::{collections::HashMap, sync::Mutex};

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

pub const CREATE_ORDER: &str = "create_order";
pub const GET_ORDER: &str = "get_order";

/// Orders by `order_ref`: the item and the user who created it.
#[derive(Default)]
pub struct Orders(Mutex<HashMap<String, (String, Option<String>)>>);

pub fn tools() -> Vec<Tool> {
    [
        json!({
            "name": CREATE_ORDER,
            "description": "Place an order for an item; returns its order_ref.",
            "inputSchema": {"type": "object", "properties": {"item": {"type": "string", "description": "What to order"}}},
            "outputSchema": {"type": "object", "properties": {"order_ref": {"type": "string"}}, "required": ["order_ref"]},
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false},
        }),
        json!({
            "name": GET_ORDER,
            "description": "Look up an order by its order_ref.",
            "inputSchema": {"type": "object", "properties": {"order_ref": {"type": "string"}}, "required": ["order_ref"]},
            "annotations": {"readOnlyHint": true},
        }),
    ]
    .into_iter()
    .map(|tool| serde_json::from_value(tool).expect("a valid tool"))
    .collect()
}

impl Orders {
    /// Answer a call of one of the order tools; `None` for any other tool.
    pub fn call(
        &self,
        name: &str,
        args: Option<&JsonObject>,
        user: Option<String>,
        unbound: bool,
        mint: impl FnOnce() -> String,
    ) -> Option<CallToolResult> {
        let arg = |key: &str| args.and_then(|a| a.get(key)).and_then(Value::as_str);
        match name {
            CREATE_ORDER => {
                let order_ref = format!("ord_{}", mint());
                let item = arg("item").unwrap_or("something").to_owned();
                self.0
                    .lock()
                    .expect("orders lock")
                    .insert(order_ref.clone(), (item, user));
                let structured = json!({"order_ref": order_ref});
                Some(CallToolResult::structured(structured))
            }
            GET_ORDER => {
                let orders = self.0.lock().expect("orders lock");
                let found = arg("order_ref")
                    .and_then(|r| orders.get(r))
                    .filter(|(_, owner)| unbound || *owner == user);
                Some(match found {
                    Some((item, _)) => CallToolResult::success(vec![ContentBlock::text(format!(
                        "order of {item}"
                    ))]),
                    None => CallToolResult::error(vec![ContentBlock::text("no such order")]),
                })
            }
            _ => None,
        }
    }
}

//! Prompts (`prompt_missing_argument_rejected`): "Servers SHOULD return standard JSON-RPC
//! errors for common failure cases: … Missing required arguments: -32602 (Invalid params)"
//! (server/prompts Error Handling, the same in every revision from 2024-11-05 to
//! 2026-07-28). A check rather than a YAML step: the prompt to ask for is the first one with
//! a required argument, and a server may have none (skipped, not failed).

use serde_json::{Value, json};

use super::calls::{Called, request};
use super::outcome::CheckOutcome;
use crate::protocol::{ListKind, errors, methods};
use crate::run::client::Connection;

pub async fn missing_argument_rejected(conn: &mut Connection) -> Result<CheckOutcome, String> {
    let list = ListKind::Prompts;
    let prompts = conn
        .list_all(list.method(), list.result_key())
        .await
        .map_err(|e| format!("{} failed: {e}", list.method()))?;
    let required = prompts.iter().find_map(|prompt| {
        let name = prompt.get("name")?.as_str()?;
        let argument = prompt
            .get("arguments")?
            .as_array()?
            .iter()
            .find(|a| a.get("required") == Some(&Value::Bool(true)))?;
        Some((
            name.to_string(),
            argument.get("name")?.as_str()?.to_string(),
        ))
    });
    let Some((name, argument)) = required else {
        return Ok(CheckOutcome::Skip(
            "no prompt has a required argument".into(),
        ));
    };
    let timeout = conn.target().timeout;
    let params = json!({"name": name, "arguments": {}});
    let got = match request(conn, methods::PROMPTS_GET, params, timeout).await {
        Called::Error { code, .. } if code == errors::INVALID_PARAMS => {
            return Ok(CheckOutcome::Pass);
        }
        Called::Result(result) => format!(
            "a result: {}",
            crate::language::assert::compact(&result, 300)
        ),
        other => other.describe(),
    };
    Ok(CheckOutcome::fail(
        format!("prompts/get \"{name}\" without its required argument `{argument}` got {got}"),
        "JSON-RPC error -32602 (Invalid params)",
        Some(got),
    ))
}

//! Lists (`list_deterministic`, `list_stable_across_connections`,
//! `cache_scope_consistent_across_pages`): what more than one traversal of a paginated
//! list shows.

use serde_json::{Value, json};

use super::outcome::CheckOutcome;
use crate::client::Connection;
use crate::engine::pool::Pool;
use crate::protocol::ListKind;

/// The stable identity of a list item.
fn item_id(list: ListKind, item: &Value) -> String {
    list.id_of(item).unwrap_or("?").to_string()
}

fn ids(list: ListKind, items: &[Value]) -> Vec<String> {
    items.iter().map(|i| item_id(list, i)).collect()
}

async fn list_all(conn: &mut Connection, list: ListKind) -> Result<Vec<Value>, String> {
    conn.list_all(list.method(), list.result_key()).await
}

/// Two full traversals return the items in the same order.
pub async fn deterministic(conn: &mut Connection, list: ListKind) -> Result<CheckOutcome, String> {
    let first = ids(list, &list_all(conn, list).await?);
    let second = ids(list, &list_all(conn, list).await?);
    if first == second {
        return Ok(CheckOutcome::Pass);
    }
    Ok(CheckOutcome::fail(
        format!(
            "{} returned a different order the second time",
            list.method()
        ),
        json!(first).to_string(),
        Some(json!(second).to_string()),
    ))
}

/// A second connection (same target and era: another process over stdio, another session
/// over HTTP) sees the same items.
pub async fn across_connections(
    conn: &mut Connection,
    list: ListKind,
    pool: &Pool,
) -> Result<CheckOutcome, String> {
    let mine = list_all(conn, list).await?;
    let target = conn.target().clone();
    let era = conn.era_request.clone();
    let label = conn.negotiated.requested.clone();
    let mut other = pool
        .borrow(&target, &label, &era)
        .await
        .map_err(|e| format!("the second connection failed: {}", e.message))?;
    let theirs = list_all(&mut other, list).await;
    pool.give_back(other, "`list_stable_across_connections`")
        .await;
    let theirs = theirs.map_err(|e| format!("on the second connection: {e}"))?;
    let sorted = |items: &[Value]| {
        let mut v: Vec<(String, String)> = items
            .iter()
            .map(|i| (item_id(list, i), i.to_string()))
            .collect();
        v.sort();
        v
    };
    let (a, b) = (sorted(&mine), sorted(&theirs));
    if a == b {
        return Ok(CheckOutcome::Pass);
    }
    let (na, nb): (Vec<&String>, Vec<&String>) = (
        a.iter().map(|x| &x.0).collect(),
        b.iter().map(|x| &x.0).collect(),
    );
    let key = list.result_key();
    let message = if na == nb {
        format!("a second connection sees the same {key} with different definitions")
    } else {
        format!("a second connection sees a different set of {key}")
    };
    Ok(CheckOutcome::fail(
        message,
        json!(na).to_string(),
        Some(json!(nb).to_string()),
    ))
}

/// Every page of the list carries the same `cacheScope`.
pub async fn cache_scope(conn: &mut Connection, list: ListKind) -> Result<CheckOutcome, String> {
    let method = list.method();
    let mut scopes: Vec<Value> = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..10_000 {
        let params = cursor.take().map(|c| json!({ "cursor": c }));
        let result = conn.call(method, params).await?;
        scopes.push(result.get("cacheScope").cloned().unwrap_or(Value::Null));
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    if scopes.len() < 2 {
        return Ok(CheckOutcome::Skip(format!(
            "{method} returned a single page: nothing to compare"
        )));
    }
    if scopes.iter().all(|s| s == &scopes[0]) && !scopes[0].is_null() {
        return Ok(CheckOutcome::Pass);
    }
    Ok(CheckOutcome::fail(
        format!("the pages of {method} do not all carry the same cacheScope"),
        "one cacheScope on every page",
        Some(json!(scopes).to_string()),
    ))
}

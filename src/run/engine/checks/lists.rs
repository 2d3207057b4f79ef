//! Lists (`list_deterministic`, `list_stable_across_connections`,
//! `cache_scope_consistent_across_pages`): what more than one traversal of a paginated
//! list shows.

use serde_json::{Value, json};

use super::outcome::CheckOutcome;
use crate::protocol::ListKind;
use crate::run::client::Connection;
use crate::run::engine::pool::Pool;

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
    let leftovers = pool
        .give_back(other, "`list_stable_across_connections`")
        .await;
    conn.adopt(leftovers);
    let theirs = theirs.map_err(|e| format!("on the second connection: {e}"))?;
    Ok(compare_sets(list, &mine, &theirs))
}

/// Fields of a list item that are display text: a second connection may word them
/// differently (a description that lists things in another order on each start) without
/// changing the set of items — `mcpspec diff` calls such a change harmless too.
const TEXT_FIELDS: &[&str] = &["description", "title", "icons", "_meta"];

/// The 2026-07-28 rule (server/tools: the set of tools "MUST NOT vary per-connection")
/// compares the set: the item ids, then each item's definition without its display text
/// (objects compare as maps, whatever their key order). A failure names what differs.
fn compare_sets(list: ListKind, mine: &[Value], theirs: &[Value]) -> CheckOutcome {
    let key = list.result_key();
    let index = |items: &[Value]| -> std::collections::BTreeMap<String, Value> {
        items
            .iter()
            .map(|i| (item_id(list, i), i.clone()))
            .collect()
    };
    let (a, b) = (index(mine), index(theirs));
    let missing: Vec<&String> = a.keys().filter(|k| !b.contains_key(*k)).collect();
    let extra: Vec<&String> = b.keys().filter(|k| !a.contains_key(*k)).collect();
    if !missing.is_empty() || !extra.is_empty() {
        return CheckOutcome::fail(
            format!(
                "a second connection sees a different set of {key}: {} only on the first, {} only on the second",
                json!(missing),
                json!(extra)
            ),
            json!(a.keys().collect::<Vec<_>>()).to_string(),
            Some(json!(b.keys().collect::<Vec<_>>()).to_string()),
        );
    }
    let mut differ: Vec<String> = Vec::new();
    for (id, x) in &a {
        let y = &b[id];
        let fields: std::collections::BTreeSet<&String> = x
            .as_object()
            .into_iter()
            .chain(y.as_object())
            .flat_map(|o| o.keys())
            .filter(|f| !TEXT_FIELDS.contains(&f.as_str()))
            .filter(|f| x.get(f.as_str()) != y.get(f.as_str()))
            .collect();
        if !fields.is_empty() {
            let fields: Vec<&str> = fields.into_iter().map(String::as_str).collect();
            differ.push(format!("\"{id}\" ({})", fields.join(", ")));
        }
    }
    if differ.is_empty() {
        return CheckOutcome::Pass;
    }
    CheckOutcome::fail(
        format!(
            "a second connection sees the same {key} with other definitions: {}",
            differ.join("; ")
        ),
        "the same definitions (display text aside)",
        Some(differ.join("; ")),
    )
}

/// Every page of the list carries the same `cacheScope`.
pub async fn cache_scope(conn: &mut Connection, list: ListKind) -> Result<CheckOutcome, String> {
    let method = list.method();
    let mut scopes: Vec<Value> = Vec::new();
    conn.each_page(method, |result| {
        scopes.push(result.get("cacheScope").cloned().unwrap_or(Value::Null));
    })
    .await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(outcome: CheckOutcome) -> String {
        match outcome {
            CheckOutcome::Fail(found) => found[0].message.clone(),
            _ => panic!("expected a failure"),
        }
    }

    #[test]
    fn the_set_is_compared_not_the_text_or_the_key_order() {
        let first = [
            json!({"name": "a", "description": "x, y", "inputSchema": {"type": "object", "required": []}}),
        ];
        let second = [
            json!({"inputSchema": {"required": [], "type": "object"}, "description": "y, x", "name": "a"}),
        ];
        assert!(matches!(
            compare_sets(ListKind::Tools, &first, &second),
            CheckOutcome::Pass
        ));
    }

    #[test]
    fn a_failure_names_the_items_and_fields_that_differ() {
        let a = json!({"name": "a", "inputSchema": {"type": "object"}});
        let b = json!({"name": "b", "inputSchema": {"type": "object"}});
        let set = failure(compare_sets(
            ListKind::Tools,
            std::slice::from_ref(&a),
            &[a.clone(), b],
        ));
        assert!(
            set.contains(r#"[] only on the first, ["b"] only on the second"#),
            "{set}"
        );
        let other = json!({"name": "a", "inputSchema": {"type": "object", "required": ["x"]}});
        let def = failure(compare_sets(ListKind::Tools, &[a], &[other]));
        assert!(def.contains(r#""a" (inputSchema)"#), "{def}");
    }
}

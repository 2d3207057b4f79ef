//! State handles (security): handle-like values returned by allowed tools must not be
//! guessable, and must be bound to the user who obtained them.
//!
//! A handle is a value the server minted: a scalar in `structuredContent` under an id-ish
//! key (`id`, `*_id`, `*Id`, `*_ref`, `handle`, `token`, `session`…) or at a JSONPath the
//! user names (`handle_paths`), that is not one of the argument values sent (an echoed
//! input is not a handle). A value that stays the same across calls is not judged.
//!
//! Each tool's example call is shared with the run's other checks; only a tool whose answer
//! holds a handle is called again (the series, or a fresh handle for the binding check).

use serde_json::{Value, json};
use serde_json_path::JsonPath;

use super::calls::{CallCtx, Called, Tool, allowed_tools, call_tool, request};
use super::outcome::{CheckOutcome, conclude};
use crate::protocol::fields::is_error;
use crate::protocol::methods;
use crate::results::outcome::Finding;
use crate::run::client::{Connection, TargetKind};

/// Calls per tool when the step sets no `count`.
const DEFAULT_CALLS: u32 = 5;
/// Below this many bits of estimated entropy a handle is guessable (OWASP session ids:
/// at least 64 bits).
const MIN_BITS: f64 = 64.0;

/// Call each allowed tool several times with its example arguments; the handles it
/// returns must not be sequential or low-entropy.
pub async fn unguessable(conn: &mut Connection, ctx: &CallCtx<'_>) -> Result<CheckOutcome, String> {
    let paths = user_paths(ctx)?;
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    let calls = ctx.options.count.unwrap_or(DEFAULT_CALLS).max(2);
    let (mut findings, mut judged, mut untestable) = (Vec::new(), 0, Vec::new());
    for tool in &tools {
        let args = match ctx.example_call(conn, tool).await {
            Ok((args, Called::Result(r)))
                if !is_error(&r) && !minted(&r, &args, &paths).is_empty() =>
            {
                args
            }
            Ok(_) => continue,
            Err(why) => {
                untestable.push(why);
                continue;
            }
        };
        let mut series: Vec<(String, Vec<Value>)> = Vec::new();
        for _ in 0..calls {
            let called = call_tool(conn, &tool.name, &args, ctx.timeout).await;
            let Called::Result(result) = &called else {
                break;
            };
            if !called.is_success() {
                break;
            }
            for (at, value) in minted(result, &args, &paths) {
                match series.iter_mut().find(|(p, _)| *p == at) {
                    Some((_, values)) => values.push(value),
                    None => series.push((at, vec![value])),
                }
            }
        }
        for (at, values) in series {
            if values.len() < 2 || values.iter().all(|v| v == &values[0]) {
                continue;
            }
            judged += 1;
            if let Some(pattern) = guessable(&values) {
                let shown = if crate::ground::redact::is_sensitive_name(&at) {
                    "values withheld (a token-like key)".to_string()
                } else {
                    json!(values).to_string()
                };
                findings.push(Finding::new(
                    format!(
                        "tool \"{}\" {at}: handles are guessable: {pattern}",
                        tool.name
                    ),
                    format!("random handles (at least {MIN_BITS} bits of entropy, not sequential)"),
                    shown,
                ));
            }
        }
    }
    if findings.is_empty() && judged == 0 {
        untestable.insert(0, NO_HANDLE.into());
    }
    Ok(conclude(conn, findings, judged, untestable))
}

/// Why nothing could be judged when no allowed tool minted a handle.
const NO_HANDLE: &str = "no allowed tool returned a server-minted handle-like value that changes between calls (keys id, *_id, *_ref, handle, token, session…, not an argument sent back; name more with --set handle_paths=JSONPATH,… or allow a tool that mints them with --set safe_tools=NAME)";

/// How a handle is used, from the `handle_consumer` parameter.
enum Consumer {
    /// `resources/read` of this URI, `{handle}` replaced.
    Uri(String),
    /// `tools/call` of a tool with the handle as one argument.
    Tool { name: String, arg: String },
}

impl Consumer {
    fn parse(text: &str) -> Result<Consumer, String> {
        if let Some(rest) = text.strip_prefix("tool:") {
            let (name, arg) = rest
                .rsplit_once('.')
                .ok_or_else(|| format!("handle_consumer `{text}`: expected tool:NAME.ARGUMENT"))?;
            return Ok(Consumer::Tool {
                name: name.into(),
                arg: arg.into(),
            });
        }
        if text.contains("{handle}") {
            return Ok(Consumer::Uri(text.into()));
        }
        Err(format!(
            "handle_consumer `{text}`: expected a resource URI containing {{handle}} (read with resources/read) or tool:NAME.ARGUMENT"
        ))
    }

    fn describe(&self) -> String {
        match self {
            Consumer::Uri(t) => format!("resources/read {t}"),
            Consumer::Tool { name, arg } => format!("tool \"{name}\" (argument {arg})"),
        }
    }

    async fn use_handle(&self, conn: &mut Connection, handle: &Value, ctx: &CallCtx<'_>) -> Called {
        match self {
            Consumer::Uri(template) => {
                let text = handle
                    .as_str()
                    .map_or_else(|| handle.to_string(), str::to_string);
                let uri = template.replace("{handle}", &text);
                let called = request(
                    conn,
                    methods::RESOURCES_READ,
                    json!({"uri": uri}),
                    ctx.timeout,
                )
                .await;
                match called {
                    // An empty read is no access to the state.
                    Called::Result(r)
                        if r.get("contents")
                            .and_then(Value::as_array)
                            .is_none_or(Vec::is_empty) =>
                    {
                        Called::Broken("resources/read returned no contents".into())
                    }
                    other => other,
                }
            }
            Consumer::Tool { name, arg } => {
                call_tool(conn, name, &json!({ arg.as_str(): handle }), ctx.timeout).await
            }
        }
    }
}

/// A handle obtained under the valid token, used under `other_user_token`, must be
/// refused (HTTP only: the token is what tells the users apart).
pub async fn binding(conn: &mut Connection, ctx: &CallCtx<'_>) -> Result<CheckOutcome, String> {
    if !conn.is_http() {
        return Ok(CheckOutcome::Skip(
            "handle binding needs the HTTP transport (users are told apart by their tokens)".into(),
        ));
    }
    let Some(other_token) = ctx.str_var("other_user_token") else {
        return Ok(CheckOutcome::Skip(
            "parameter other_user_token is not set (--set other_user_token=env:VAR)".into(),
        ));
    };
    let configured = ctx
        .str_var("handle_consumer")
        .map(|c| Consumer::parse(&c))
        .transpose()?;
    let paths = user_paths(ctx)?;
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    if let Some(Consumer::Tool { name, .. }) = &configured
        && !tools.iter().any(|t| &t.name == name)
    {
        return Ok(CheckOutcome::Skip(format!(
            "not testable: the consumer tool \"{name}\" is neither read-only nor in safe_tools"
        )));
    }
    let (tool, at, handle) = match first_handle(conn, ctx, &tools, &paths).await {
        Ok(found) => found,
        Err(untestable) => {
            return Ok(CheckOutcome::Skip(format!(
                "not testable: {NO_HANDLE}{}",
                untestable
                    .iter()
                    .map(|why| format!("; {why}"))
                    .collect::<String>()
            )));
        }
    };
    let consumer = match configured {
        Some(c) => c,
        None => match infer_consumer(&tools, &tool, &at) {
            Some(c) => {
                conn.note(format!(
                    "handle_consumer inferred: {} (it takes the argument named like the handle's key)",
                    c.describe()
                ));
                c
            }
            None => {
                let key = key_of(&at);
                let why = if key.eq_ignore_ascii_case("id") {
                    "a bare `id` is too generic to infer its consumer from".to_string()
                } else {
                    format!("no other read-only or safe_tools tool takes an argument `{key}`")
                };
                return Ok(CheckOutcome::Skip(format!(
                    "not testable: tool \"{tool}\" returns a handle at {at}, but {why}: set how it is used, --set handle_consumer=tool:NAME.{key} (NAME takes the handle as `{key}`; read-only or in safe_tools) or --set 'handle_consumer=URI' with {{handle}} in the URI (read with resources/read)"
                )));
            }
        },
    };
    let own = consumer.use_handle(conn, &handle, ctx).await;
    if !own.is_success() {
        return Ok(CheckOutcome::Skip(format!(
            "not testable: {} refuses the handle from tool \"{tool}\" {at} for its own user too: {}",
            consumer.describe(),
            own.describe()
        )));
    }
    let mut target = conn.target().clone();
    if let TargetKind::Http { bearer, auth, .. } = &mut target.kind {
        *bearer = Some(other_token);
        // The other user's token, not the run's sign-in.
        *auth = None;
    }
    let mut other = Connection::open(&target, &conn.negotiated.requested, &conn.era_request)
        .await
        .map_err(|e| format!("cannot connect with other_user_token: {}", e.message))?;
    if !other.knows_tools() {
        let _ = other.tools().await;
    }
    let theirs = consumer.use_handle(&mut other, &handle, ctx).await;
    other.close().await;
    if !theirs.is_success() {
        return Ok(CheckOutcome::Pass);
    }
    Ok(CheckOutcome::Fail(vec![Finding::new(
        format!(
            "a handle obtained from tool \"{tool}\" {at} under the valid token is usable under other_user_token ({})",
            consumer.describe()
        ),
        "refused for another user (an error, isError, or HTTP 401/403/404)",
        theirs.describe(),
    )]))
}

/// The first allowed tool whose (shared) example call mints a handle, called once more on
/// this connection for a handle of its own: `(tool, where, handle)`; otherwise the reasons
/// tools could not be tried (e.g. slow ones).
async fn first_handle(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
    tools: &[Tool],
    paths: &[(String, JsonPath)],
) -> Result<(String, String, Value), Vec<String>> {
    let mut untestable = Vec::new();
    for tool in tools {
        let args = match ctx.example_call(conn, tool).await {
            Ok((args, Called::Result(r))) if !minted(&r, &args, paths).is_empty() => args,
            Ok(_) => continue,
            Err(why) => {
                untestable.push(why);
                continue;
            }
        };
        if let Called::Result(r) = call_tool(conn, &tool.name, &args, ctx.timeout).await
            && let Some((at, v)) = minted(&r, &args, paths).into_iter().next()
        {
            return Ok((tool.name.clone(), at, v));
        }
    }
    Err(untestable)
}

/// The last key of a handle's location (`$.structuredContent.order_ref` → `order_ref`).
fn key_of(at: &str) -> &str {
    at.rsplit(['.', '[', ']', '\'', '"'])
        .find(|k| !k.is_empty())
        .unwrap_or(at)
}

/// A consumer for a handle found at `at` in a result of `producer`: another allowed tool
/// with an argument of the same name as the handle's key (`order_ref` → a tool taking
/// `order_ref`). A bare `id` is too generic to match on.
fn infer_consumer(tools: &[Tool], producer: &str, at: &str) -> Option<Consumer> {
    let key = key_of(at);
    if key.eq_ignore_ascii_case("id") {
        return None;
    }
    tools
        .iter()
        .filter(|t| t.name != producer)
        .find(|t| {
            t.input_schema()
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key(key))
        })
        .map(|t| Consumer::Tool {
            name: t.name.clone(),
            arg: key.to_string(),
        })
}

fn user_paths(ctx: &CallCtx<'_>) -> Result<Vec<(String, JsonPath)>, String> {
    ctx.list_var("handle_paths")
        .into_iter()
        .map(|p| {
            JsonPath::parse(&p)
                .map(|jp| (p.clone(), jp))
                .map_err(|e| format!("handle_paths: `{p}` is not a JSONPath: {e}"))
        })
        .collect()
}

/// Handle-like values of a result that the server minted: none of them is a value of the
/// arguments sent (an echoed input is not a handle).
fn minted(result: &Value, args: &Value, paths: &[(String, JsonPath)]) -> Vec<(String, Value)> {
    let mut sent = Vec::new();
    scalars(args, &mut sent);
    handle_values(result, paths)
        .into_iter()
        .filter(|(_, v)| !sent.iter().any(|s| same_scalar(s, v)))
        .collect()
}

fn scalars<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(m) => m.values().for_each(|v| scalars(v, out)),
        Value::Array(a) => a.iter().for_each(|v| scalars(v, out)),
        other => out.push(other),
    }
}

/// Equal, or the same text (`7` sent, `"7"` returned).
fn same_scalar(sent: &Value, got: &Value) -> bool {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    sent == got || text(sent) == text(got)
}

/// Handle-like values of a result: `(where, value)`.
fn handle_values(result: &Value, paths: &[(String, JsonPath)]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Some(s) = crate::protocol::fields::structured_content(result) {
        walk(s, "$.structuredContent", 0, &mut out);
    }
    for (p, jp) in paths {
        if let Some(v) = jp.query(result).all().first() {
            out.push((p.clone(), (*v).clone()));
        }
    }
    out
}

fn walk(value: &Value, at: &str, depth: usize, out: &mut Vec<(String, Value)>) {
    let Value::Object(map) = value else {
        return;
    };
    for (k, v) in map {
        let here = format!("{at}.{k}");
        match v {
            Value::String(_) | Value::Number(_) if handle_key(k) => out.push((here, v.clone())),
            Value::Object(_) if depth < 3 => walk(v, &here, depth + 1, out),
            _ => {}
        }
    }
}

fn handle_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k == "id"
        || k.ends_with("_id")
        || key.ends_with("Id")
        || k == "ref"
        || k.ends_with("_ref")
        || key.ends_with("Ref")
        || ["handle", "token", "session", "cursor_id", "ticket"]
            .iter()
            .any(|w| k.contains(w))
}

/// Why these distinct values look guessable, if they do.
pub fn guessable(values: &[Value]) -> Option<String> {
    let texts: Vec<String> = values
        .iter()
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        .collect();
    let prefix = common_prefix(&texts);
    let suffix = common_suffix(&texts, prefix);
    let middles: Vec<&str> = texts.iter().map(|t| &t[prefix..t.len() - suffix]).collect();
    let numbers: Option<Vec<i128>> = middles.iter().map(|m| m.parse().ok()).collect();
    // A counter, possibly shared with other users (steps vary but stay small).
    if let Some(numbers) = numbers {
        let steps: Vec<i128> = numbers.windows(2).map(|w| w[1] - w[0]).collect();
        let monotonic = steps.iter().all(|s| *s > 0) || steps.iter().all(|s| *s < 0);
        if monotonic && steps.iter().all(|s| s.abs() <= 1000) {
            let step = if steps.iter().all(|s| *s == steps[0]) {
                format!("step {}", steps[0])
            } else {
                format!("steps {steps:?}")
            };
            let (head, tail) = (&texts[0][..prefix], &texts[0][texts[0].len() - suffix..]);
            return Some(match (head.is_empty(), tail.is_empty()) {
                (true, true) if step == "step 1" || step == "step -1" => {
                    format!("consecutive integers ({step})")
                }
                (true, true) => format!("integers from a counter ({step})"),
                (false, true) => format!("a counter after a shared prefix `{head}` ({step})"),
                (true, false) => format!("a counter before a shared suffix `{tail}` ({step})"),
                (false, false) => format!(
                    "a counter inside a shared prefix `{head}` and suffix `{tail}` ({step})"
                ),
            });
        }
    }
    let bits = entropy_bits(&middles);
    (bits < MIN_BITS).then(|| {
        format!(
            "low entropy: about {bits:.0} bits per handle (the part that varies: {:?}…)",
            middles[0]
        )
    })
}

/// Byte length of the common prefix, on a char boundary.
fn common_prefix(texts: &[String]) -> usize {
    let first = &texts[0];
    let mut len = 0;
    for (i, c) in first.char_indices() {
        if texts.iter().all(|t| t[i..].starts_with(c)) {
            len = i + c.len_utf8();
        } else {
            break;
        }
    }
    len
}

/// Byte length of the common suffix not overlapping the prefix. Compared as whole
/// strings (`ends_with`), never by slicing one text at an offset taken from another: a
/// byte count from `"xé"` falls inside a character of `"a中"`.
fn common_suffix(texts: &[String], prefix: usize) -> usize {
    let first = &texts[0];
    let mut len = 0;
    for c in first[prefix..].chars().rev() {
        let n = len + c.len_utf8();
        let tail = &first[first.len() - n..];
        if texts
            .iter()
            .all(|t| t.len() >= prefix + n && t.ends_with(tail))
        {
            len = n;
        } else {
            break;
        }
    }
    len
}

/// Estimated entropy of the varying part: its shortest alphanumeric length times the
/// bits per character of the smallest alphabet that covers what was seen.
fn entropy_bits(middles: &[&str]) -> f64 {
    let chars: Vec<char> = middles
        .iter()
        .flat_map(|m| m.chars())
        .filter(|c| c.is_alphanumeric())
        .collect();
    let alphabet = if chars.iter().all(char::is_ascii_digit) {
        10.0
    } else if chars
        .iter()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        || chars
            .iter()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
    {
        16.0
    } else if chars
        .iter()
        .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
        || chars
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    {
        36.0
    } else {
        62.0_f64
    };
    let shortest = middles
        .iter()
        .map(|m| m.chars().filter(|c| c.is_alphanumeric()).count())
        .min()
        .unwrap_or(0);
    shortest as f64 * alphabet.log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(values: &[Value]) -> Option<String> {
        guessable(values)
    }

    #[test]
    fn sequential_values_are_guessable() {
        let p = g(&[json!(1), json!(2), json!(3)]).unwrap();
        assert!(p.contains("consecutive integers (step 1)"), "{p}");
        let p = g(&[json!("note-7"), json!("note-8"), json!("note-9")]).unwrap();
        assert!(p.contains("prefix `note-` (step 1)"), "{p}");
        // Interleaved with another user's calls: still a counter.
        let p = g(&[
            json!("note-5"),
            json!("note-7"),
            json!("note-8"),
            json!("note-10"),
        ])
        .unwrap();
        assert!(p.contains("prefix `note-` (steps [2, 1, 2])"), "{p}");
        let p = g(&[
            json!("a-1732932000456"),
            json!("a-1732932000123"),
            json!("a-1732932001007"),
        ])
        .unwrap();
        assert!(p.contains("low entropy"), "{p}");
    }

    /// Server bytes of any script: affixes are found on character boundaries, whatever
    /// the other handles hold (`"xé"` then `"a中"` once panicked).
    #[test]
    fn non_ascii_handles_never_panic() {
        let sets: &[&[&str]] = &[
            &["xé", "a中"],
            &["a中", "xé"],
            &["é", "中é", "ü"],
            &["中1", "中2", "中3"],
            &["1中", "2中", "3中"],
            &["🦀é🦀", "é🦀", "🦀"],
            &["", "é", "ée"],
        ];
        for set in sets {
            let values: Vec<Value> = set.iter().map(|s| json!(s)).collect();
            let _ = g(&values);
        }
        let p = g(&[json!("中-1"), json!("中-2"), json!("中-3")]).unwrap();
        assert!(p.contains("prefix `中-` (step 1)"), "{p}");
        let p = g(&[json!("1-é"), json!("2-é"), json!("3-é")]).unwrap();
        assert!(p.contains("suffix `-é` (step 1)"), "{p}");
    }

    #[test]
    fn random_uuids_are_not() {
        let values = [
            json!("3f2b8c1e-9a4d-4f6e-8b2a-1c3d5e7f9a0b"),
            json!("a81c0d2e-5b7f-4e93-9c1d-2e4f6a8b0c1d"),
            json!("5d9e1f3a-7b2c-4d8e-a0f1-3b5c7d9e1f2a"),
        ];
        assert_eq!(g(&values), None);
    }

    #[test]
    fn handle_keys() {
        let r = json!({"structuredContent": {"id": "x", "note_id": 1, "sum": 2, "nested": {"sessionToken": "t"}}});
        let found: Vec<String> = handle_values(&r, &[]).into_iter().map(|(a, _)| a).collect();
        assert_eq!(
            found,
            vec![
                "$.structuredContent.id",
                "$.structuredContent.note_id",
                "$.structuredContent.nested.sessionToken"
            ]
        );
    }

    #[test]
    fn echoed_arguments_are_not_handles() {
        let r =
            json!({"structuredContent": {"id": "abc", "order_ref": "r-9f3c", "n": {"user_id": 7}}});
        let at = |found: Vec<(String, Value)>| -> Vec<String> {
            found.into_iter().map(|(a, _)| a).collect()
        };
        // `id` was sent, `order_ref` was minted; `7` comes back as a number for "7" sent.
        let got = minted(&r, &json!({"id": "abc", "filter": {"user": "7"}}), &[]);
        assert_eq!(at(got), vec!["$.structuredContent.order_ref"]);
        let got = minted(&r, &json!({}), &[]);
        assert_eq!(
            at(got),
            vec![
                "$.structuredContent.id",
                "$.structuredContent.order_ref",
                "$.structuredContent.n.user_id"
            ]
        );
    }

    fn tool(name: &str, props: &[&str]) -> Tool {
        let properties: serde_json::Map<String, Value> = props
            .iter()
            .map(|p| (p.to_string(), json!({"type": "string"})))
            .collect();
        Tool {
            name: name.into(),
            def: json!({"name": name, "inputSchema": {"type": "object", "properties": properties}}),
        }
    }

    #[test]
    fn consumers_are_inferred_by_key_name() {
        let tools = [
            tool("create_order", &["item", "order_ref"]),
            tool("search", &["query"]),
            tool("get_order", &["order_ref"]),
        ];
        let c = infer_consumer(&tools, "create_order", "$.structuredContent.order_ref").unwrap();
        assert_eq!(c.describe(), "tool \"get_order\" (argument order_ref)");
        // A user path: its last key.
        let c = infer_consumer(&tools, "create_order", "$.structuredContent['order_ref']");
        assert!(c.is_some());
        // Nothing takes it; a bare `id` is never matched.
        assert!(infer_consumer(&tools, "create_order", "$.structuredContent.ticket").is_none());
        let by_id = [tool("make", &[]), tool("get", &["id"])];
        assert!(infer_consumer(&by_id, "make", "$.structuredContent.id").is_none());
    }

    #[test]
    fn consumers_parse() {
        assert!(matches!(
            Consumer::parse("note://{handle}"),
            Ok(Consumer::Uri(_))
        ));
        assert!(matches!(
            Consumer::parse("tool:get_note.id"),
            Ok(Consumer::Tool { .. })
        ));
        assert!(Consumer::parse("note://x").is_err());
    }
}

//! mcpspec-model-server: a small local model server for mcpspec's eval tests, offline and
//! deterministic. It speaks OpenAI-compatible Chat Completions (`POST /v1/chat/completions`)
//! and Anthropic Messages (`POST /v1/messages`) with tool calling, on 127.0.0.1 only, and
//! answers by the policy in `policy.rs`. `--fault` flags seed the failures an eval runner
//! must survive.

mod judge;
mod policy;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::{
    Router,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
};
use clap::Parser;
use serde_json::{Value, json};

use policy::{Reply, Tool};

#[derive(Parser, Debug)]
#[command(
    name = "mcpspec-model-server",
    about = "Deterministic local model server (OpenAI Chat Completions + Anthropic Messages) for mcpspec eval tests",
    after_help = "Faults (--fault NAME[:WORD], repeatable; with :WORD only for tasks whose text contains WORD):\n  \
malformed-args  the tool call's arguments are not valid JSON\n  \
unknown-tool    the model calls a tool that was not offered (`no_such_tool`)\n  \
loop            the model calls the tool again after every result, never answering\n  \
rate-limit      the first 2 requests get 429 with Retry-After: 1, then normal answers\n  \
server-error    every request gets HTTP 500\n  \
hang            the request is accepted and never answered\n  \
sloppy-args     nearly right arguments: numbers off by one, strings without their last character\n  \
vague           the final answer does not say what the tool returned\n  \
garbage-verdict as a judge, the verdict is prose, not the JSON asked for\n  \
no-usage        replies carry no `usage` (token counts unknown)\n  \
stall-body      the reply's status and headers come, its body stalls after a few bytes\n  \
many-calls      a reply with a tool call asks for it 20 times at once\n  \
huge-reply      every reply carries 5 MiB of padding\n  \
huge-args       a string argument of a tool call is 1 MiB long\n  \
http-date-retry the first request gets 429 with an HTTP-date Retry-After 3 s ahead\n\n\
A request whose last user turn holds fenced <answer-F> (or <argument-F>) and <rubric-F> sections is graded as a judge:\n\
the score is the share of the rubric's double-quoted phrases the answer (or argument) contains."
)]
struct Args {
    /// Port on 127.0.0.1 (0: a free one). Prints `listening on http://127.0.0.1:PORT` once bound.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Require this API key (`Authorization: Bearer`, `x-api-key` or `api-key`); else 401.
    #[arg(long, value_name = "KEY")]
    api_key: Option<String>,
    /// Seed a fault (see below).
    #[arg(long = "fault", value_name = "NAME[:WORD]")]
    faults: Vec<String>,
    /// Serve only these model names (repeatable); another gets 404, as hosted APIs answer an
    /// unknown model. Default: any name.
    #[arg(long = "serve-model", value_name = "NAME")]
    serve_models: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FaultKind {
    MalformedArgs,
    UnknownTool,
    Loop,
    RateLimit,
    ServerError,
    Hang,
    SloppyArgs,
    Vague,
    GarbageVerdict,
    NoUsage,
    StallBody,
    ManyCalls,
    HugeReply,
    HugeArgs,
    HttpDateRetry,
}

struct Fault {
    kind: FaultKind,
    /// Only tasks containing this word (lower-case).
    word: Option<String>,
}

struct App {
    api_key: Option<String>,
    /// Empty: any model name.
    serve_models: Vec<String>,
    faults: Vec<Fault>,
    /// Requests seen by the rate-limit fault.
    limited: AtomicUsize,
}

impl App {
    fn fault(&self, kind: FaultKind, task: &str) -> bool {
        let task = task.to_lowercase();
        self.faults
            .iter()
            .any(|f| f.kind == kind && f.word.as_ref().is_none_or(|w| task.contains(w)))
    }
}

fn parse_fault(text: &str) -> Result<Fault, String> {
    let (name, word) = match text.split_once(':') {
        Some((n, w)) => (n, Some(w.to_lowercase())),
        None => (text, None),
    };
    let kind = match name {
        "malformed-args" => FaultKind::MalformedArgs,
        "unknown-tool" => FaultKind::UnknownTool,
        "loop" => FaultKind::Loop,
        "rate-limit" => FaultKind::RateLimit,
        "server-error" => FaultKind::ServerError,
        "hang" => FaultKind::Hang,
        "sloppy-args" => FaultKind::SloppyArgs,
        "vague" => FaultKind::Vague,
        "garbage-verdict" => FaultKind::GarbageVerdict,
        "no-usage" => FaultKind::NoUsage,
        "stall-body" => FaultKind::StallBody,
        "many-calls" => FaultKind::ManyCalls,
        "huge-reply" => FaultKind::HugeReply,
        "huge-args" => FaultKind::HugeArgs,
        "http-date-retry" => FaultKind::HttpDateRetry,
        other => return Err(format!("unknown fault `{other}` (see --help)")),
    };
    Ok(Fault { kind, word })
}

/// A conversation read from either API: the task, the tools, the tool results so far and
/// the last tool call (name, arguments).
struct Conversation {
    task: String,
    tools: Vec<Tool>,
    results: Vec<String>,
    last_call: Option<(String, String)>,
    /// Rough size of the input, for `usage` (4 characters a token).
    chars: usize,
    /// The model name asked for: `sloppy…` fills free-text arguments with the whole task.
    model: String,
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The request a model answers: the last user turn that has text (an Anthropic user turn
/// that only carries tool results has none), and where it is. Tool results count from there.
fn last_user_turn(messages: &[Value]) -> (usize, String) {
    messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| m["role"] == "user")
        .map(|(i, m)| (i, text_of(&m["content"])))
        .find(|(_, text)| !text.is_empty())
        .unwrap_or_default()
}

fn openai_conversation(body: &Value) -> Conversation {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let (turn, task) = last_user_turn(&messages);
    let results = messages[turn..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| text_of(&m["content"]))
        .collect();
    let last_call = messages
        .iter()
        .rev()
        .find_map(|m| m["tool_calls"].as_array()?.first().cloned())
        .map(|c| {
            (
                c["function"]["name"].as_str().unwrap_or("").to_string(),
                c["function"]["arguments"]
                    .as_str()
                    .unwrap_or("{}")
                    .to_string(),
            )
        });
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| Tool {
            name: t["function"]["name"].as_str().unwrap_or("").to_string(),
            description: t["function"]["description"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            schema: t["function"]["parameters"].clone(),
        })
        .collect();
    Conversation {
        task,
        tools,
        results,
        last_call,
        chars: body.to_string().len(),
        model: body["model"].as_str().unwrap_or("").to_string(),
    }
}

fn anthropic_conversation(body: &Value) -> Conversation {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let (turn, task) = last_user_turn(&messages);
    let blocks = || {
        messages[turn..]
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
    };
    let results = blocks()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| text_of(&b["content"]))
        .collect();
    let last_call = blocks().rfind(|b| b["type"] == "tool_use").map(|b| {
        (
            b["name"].as_str().unwrap_or("").to_string(),
            b["input"].to_string(),
        )
    });
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| Tool {
            name: t["name"].as_str().unwrap_or("").to_string(),
            description: t["description"].as_str().unwrap_or("").to_string(),
            schema: t["input_schema"].clone(),
        })
        .collect();
    Conversation {
        task,
        tools,
        results,
        last_call,
        chars: body.to_string().len(),
        model: body["model"].as_str().unwrap_or("").to_string(),
    }
}

/// Arguments nearly right: numbers off by one, strings one character short.
fn sloppy(arguments: &str) -> String {
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str::<Value>(arguments) else {
        return arguments.to_string();
    };
    for v in map.values_mut() {
        if let Some(n) = v.as_f64() {
            *v = json!(n + 1.0);
        } else if let Some(s) = v.as_str() {
            let mut s = s.to_string();
            s.pop();
            *v = json!(s);
        }
    }
    Value::Object(map).to_string()
}

/// Arguments whose string values are 1 MiB long.
fn huge(arguments: &str) -> String {
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str::<Value>(arguments) else {
        return arguments.to_string();
    };
    for v in map.values_mut() {
        if v.is_string() {
            *v = json!("x".repeat(1024 * 1024));
        }
    }
    Value::Object(map).to_string()
}

/// The policy's reply with the faults applied.
fn decide(app: &App, c: &Conversation) -> Reply {
    if judge::is_judge(&c.task) {
        return Reply::Text(if app.fault(FaultKind::GarbageVerdict, &c.task) {
            "The answer looks fine to me, I would say quite good.".to_string()
        } else {
            judge::verdict(&c.task)
        });
    }
    if app.fault(FaultKind::Vague, &c.task) && !c.results.is_empty() {
        return Reply::Text("I looked that up for you; all done.".to_string());
    }
    if app.fault(FaultKind::Loop, &c.task)
        && let Some((name, arguments)) = &c.last_call
    {
        return Reply::Call {
            name: name.clone(),
            arguments: arguments.clone(),
        };
    }
    match policy::reply(&c.task, &c.tools, &c.results, c.model.starts_with("sloppy")) {
        Reply::Call { name, arguments } => {
            let name = if app.fault(FaultKind::UnknownTool, &c.task) {
                "no_such_tool".to_string()
            } else {
                name
            };
            let arguments = if app.fault(FaultKind::MalformedArgs, &c.task) {
                // Cut short: not valid JSON.
                arguments[..arguments.len().saturating_sub(1).max(1)].to_string()
            } else if app.fault(FaultKind::SloppyArgs, &c.task) {
                sloppy(&arguments)
            } else if app.fault(FaultKind::HugeArgs, &c.task) {
                huge(&arguments)
            } else {
                arguments
            };
            Reply::Call { name, arguments }
        }
        text => text,
    }
}

fn authorized(app: &App, headers: &HeaderMap) -> bool {
    let Some(key) = &app.api_key else {
        return true;
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("authorization").and_then(|v| v.strip_prefix("Bearer ")) == Some(key.as_str())
        || header("x-api-key") == Some(key.as_str())
        || header("api-key") == Some(key.as_str())
}

/// The fault, auth or unknown-model answer that comes before any policy, if one applies
/// (the `hang` fault never returns).
async fn refuse(
    app: &App,
    headers: &HeaderMap,
    body: &Value,
    task: &str,
    anthropic: bool,
) -> Option<Response> {
    let error = |status: StatusCode, kind: &str, message: &str| {
        let body = if anthropic {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        } else {
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
        };
        (status, axum::Json(body)).into_response()
    };
    if !authorized(app, headers) {
        return Some(error(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid API key",
        ));
    }
    let model = body["model"].as_str().unwrap_or("");
    if !app.serve_models.is_empty() && !app.serve_models.iter().any(|m| m == model) {
        return Some(error(
            StatusCode::NOT_FOUND,
            "not_found_error",
            &format!("The model `{model}` does not exist"),
        ));
    }
    if app.fault(FaultKind::Hang, task) {
        std::future::pending::<()>().await;
    }
    if app.fault(FaultKind::StallBody, task) {
        // 200 and a first chunk, then nothing: a body that never ends.
        let chunks = futures_util::stream::unfold(0u8, |n| async move {
            if n == 0 {
                Some((Ok::<_, std::io::Error>("{\"id\": \"stalled\", "), 1))
            } else {
                std::future::pending().await
            }
        });
        return Some(
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                axum::body::Body::from_stream(chunks),
            )
                .into_response(),
        );
    }
    if app.fault(FaultKind::ServerError, task) {
        return Some(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "seeded server error",
        ));
    }
    if app.fault(FaultKind::HttpDateRetry, task) && app.limited.fetch_add(1, Ordering::SeqCst) < 1 {
        let mut r = error(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "seeded rate limit",
        );
        let when = httpdate::fmt_http_date(
            std::time::SystemTime::now() + std::time::Duration::from_secs(3),
        );
        r.headers_mut().insert(
            "retry-after",
            axum::http::HeaderValue::from_str(&when).expect("an HTTP date"),
        );
        return Some(r);
    }
    if app.fault(FaultKind::RateLimit, task) && app.limited.fetch_add(1, Ordering::SeqCst) < 2 {
        let mut r = error(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "seeded rate limit",
        );
        r.headers_mut()
            .insert("retry-after", axum::http::HeaderValue::from_static("1"));
        return Some(r);
    }
    None
}

/// The `huge-reply` fault: 5 MiB of padding in the reply.
fn pad(app: &App, task: &str, reply: &mut Value) {
    if app.fault(FaultKind::HugeReply, task) {
        reply["padding"] = json!("p".repeat(5 * 1024 * 1024));
    }
}

fn tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

async fn chat_completions(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let c = openai_conversation(&body);
    if let Some(r) = refuse(&app, &headers, &body, &c.task, false).await {
        return r;
    }
    let model = body["model"].as_str().unwrap_or("local");
    let turn = c.results.len();
    let (message, finish, out_chars) = match decide(&app, &c) {
        Reply::Text(text) => {
            let n = text.len();
            (json!({"role": "assistant", "content": text}), "stop", n)
        }
        Reply::Call { name, arguments } => {
            let n = name.len() + arguments.len();
            (
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "id": format!("call_{turn}"), "type": "function",
                    "function": {"name": name, "arguments": arguments}}]}),
                "tool_calls",
                n,
            )
        }
    };
    let mut message = message;
    if app.fault(FaultKind::ManyCalls, &c.task)
        && let Some(first) = message["tool_calls"].get(0).cloned()
    {
        let calls: Vec<Value> = (0..20)
            .map(|i| {
                let mut call = first.clone();
                call["id"] = json!(format!("call_{turn}_{i}"));
                call
            })
            .collect();
        message["tool_calls"] = json!(calls);
    }
    let (input, output) = (tokens(c.chars), tokens(out_chars));
    let mut reply = json!({
        "id": format!("chatcmpl-{turn}"), "object": "chat.completion", "created": 1_764_590_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
    });
    if app.fault(FaultKind::NoUsage, &c.task) {
        reply.as_object_mut().map(|o| o.remove("usage"));
    }
    pad(&app, &c.task, &mut reply);
    axum::Json(reply).into_response()
}

async fn messages(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let c = anthropic_conversation(&body);
    if let Some(r) = refuse(&app, &headers, &body, &c.task, true).await {
        return r;
    }
    let model = body["model"].as_str().unwrap_or("local");
    let turn = c.results.len();
    let (content, stop, out_chars) = match decide(&app, &c) {
        Reply::Text(text) => {
            let n = text.len();
            (json!([{"type": "text", "text": text}]), "end_turn", n)
        }
        Reply::Call { name, arguments } => {
            let n = name.len() + arguments.len();
            // Anthropic sends `input` parsed; malformed arguments travel as a string.
            let input = serde_json::from_str::<Value>(&arguments).unwrap_or(json!(arguments));
            (
                json!([{"type": "tool_use", "id": format!("toolu_{turn}"), "name": name, "input": input}]),
                "tool_use",
                n,
            )
        }
    };
    let mut reply = json!({
        "id": format!("msg_{turn}"), "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop,
        "usage": {"input_tokens": tokens(c.chars), "output_tokens": tokens(out_chars)},
    });
    if app.fault(FaultKind::NoUsage, &c.task) {
        reply.as_object_mut().map(|o| o.remove("usage"));
    }
    pad(&app, &c.task, &mut reply);
    axum::Json(reply).into_response()
}

fn main() {
    let args = Args::parse();
    let faults = match args
        .faults
        .iter()
        .map(|f| parse_fault(f))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let app = Arc::new(App {
        api_key: args.api_key,
        serve_models: args.serve_models,
        faults,
        limited: AtomicUsize::new(0),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: cannot bind 127.0.0.1:{}: {e}", args.port);
                std::process::exit(4);
            }
        };
        let addr = listener.local_addr().expect("bound address");
        println!("listening on http://{addr}");
        let router = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/v1/messages", post(messages))
            .with_state(app);
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        if let Err(e) = axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await
        {
            eprintln!("error: {e}");
        }
    });
}

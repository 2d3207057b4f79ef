//! The tools: `echo`, `add`, `get_weather`, `divide`, `slow`, `create_note`, plus the
//! generated `gen_NNNN` tools of `--extra-tools` and the `multiply` tool of
//! `--change add-tool`.
//!
//! Input and output schemas are written out by hand so the wire shows exactly what the
//! tests expect; the argument structs mirror them. A call whose arguments do not
//! deserialize becomes a tool result with `isError: true` (rmcp's `ToolRouter` turns
//! `Parameters<T>` failures into that, SEP-1303).

use std::{sync::Arc, time::Duration};

use rmcp::{
    ErrorData as McpError,
    handler::server::{
        router::tool::{ToolRoute, ToolRouter},
        wrapper::Parameters,
    },
    model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations},
    tool, tool_router,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::server::{ExampleServer, Note};

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(object) => Arc::new(object),
        other => panic!("schema must be an object: {other}"),
    }
}

/// Renders a float as an integer when it is one, so `2 + 3` reads `5`, not `5.0`.
pub fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

/// A successful result carrying `structured` both as `structuredContent` and as JSON text.
fn structured(structured: Value) -> CallToolResult {
    CallToolResult::structured(structured)
}

fn number_pair_schema(a: &str, b: &str) -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": a},
            "b": {"type": "number", "description": b},
        },
        "required": ["a", "b"],
    }))
}

fn echo_input() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo back"}},
        "required": ["text"],
    }))
}

fn add_input() -> Arc<JsonObject> {
    number_pair_schema("First addend", "Second addend")
}

fn add_output() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    }))
}

fn weather_input() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "units": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "Temperature units (default celsius)",
            },
        },
        "required": ["city"],
    }))
}

fn weather_output() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temperature": {"type": "number"},
            "conditions": {"type": "string"},
        },
        "required": ["city", "temperature", "conditions"],
    }))
}

fn divide_input() -> Arc<JsonObject> {
    number_pair_schema("Dividend", "Divisor (must not be 0)")
}

fn divide_output() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"quotient": {"type": "number"}},
        "required": ["quotient"],
    }))
}

fn multiply_output() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"product": {"type": "number"}},
        "required": ["product"],
    }))
}

fn slow_input() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "ms": {"type": "integer", "minimum": 0, "description": "How long to sleep, in milliseconds"},
        },
        "required": ["ms"],
    }))
}

fn create_note_input() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Note title"},
            "body": {"type": "string", "description": "Note text"},
        },
        "required": ["title", "body"],
    }))
}

fn create_note_output() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"id": {"type": "string", "description": "Handle of the new note"}},
        "required": ["id"],
    }))
}

#[derive(Deserialize)]
pub struct EchoArgs {
    text: String,
}

#[derive(Deserialize)]
pub struct NumberPair {
    a: f64,
    b: f64,
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    #[default]
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize)]
pub struct WeatherArgs {
    city: String,
    #[serde(default)]
    units: Option<Units>,
}

#[derive(Deserialize)]
pub struct SlowArgs {
    ms: u64,
}

#[derive(Deserialize)]
pub struct CreateNoteArgs {
    title: String,
    body: String,
}

const CONDITIONS: [&str; 4] = ["sunny", "cloudy", "rainy", "windy"];

#[tool_router(router = builtin_tools)]
impl ExampleServer {
    #[tool(
        name = "echo",
        title = "Echo",
        description = "Return the given text unchanged.",
        input_schema = echo_input(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.text
    }

    #[tool(
        name = "add",
        title = "Add Numbers",
        description = "Add two numbers and return their sum.",
        input_schema = add_input(),
        output_schema = add_output(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn add(&self, Parameters(args): Parameters<NumberPair>) -> CallToolResult {
        structured(json!({"sum": number(args.a + args.b)}))
    }

    #[tool(
        name = "get_weather",
        title = "Get Weather",
        description = "Get the current weather for a city (deterministic fake data).",
        input_schema = weather_input(),
        output_schema = weather_output(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_weather(&self, Parameters(args): Parameters<WeatherArgs>) -> CallToolResult {
        let len = args.city.chars().count();
        let celsius = 10 + (len * 3 % 20) as i64;
        let temperature = match args.units.unwrap_or_default() {
            Units::Celsius => number(celsius as f64),
            Units::Fahrenheit => number(celsius as f64 * 9.0 / 5.0 + 32.0),
        };
        structured(json!({
            "city": args.city,
            "temperature": temperature,
            "conditions": CONDITIONS[len % CONDITIONS.len()],
        }))
    }

    #[tool(
        name = "divide",
        title = "Divide Numbers",
        description = "Divide a by b. Dividing by zero is a tool error.",
        input_schema = divide_input(),
        output_schema = divide_output(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn divide(&self, Parameters(args): Parameters<NumberPair>) -> CallToolResult {
        if args.b == 0.0 {
            return CallToolResult::error(vec![ContentBlock::text("division by zero")]);
        }
        structured(json!({"quotient": number(args.a / args.b)}))
    }

    #[tool(
        name = "slow",
        title = "Slow Operation",
        description = "Sleep for `ms` milliseconds, then return \"done\".",
        input_schema = slow_input(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn slow(&self, Parameters(args): Parameters<SlowArgs>) -> String {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        "done".to_owned()
    }

    #[tool(
        name = "create_note",
        title = "Create Note",
        description = "Store a note in memory and return its id.",
        input_schema = create_note_input(),
        output_schema = create_note_output(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn create_note(
        &self,
        Parameters(args): Parameters<CreateNoteArgs>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> CallToolResult {
        let id = self.store_note(Note {
            title: args.title,
            body: args.body,
            owner: self.user(&context),
        });
        structured(json!({"id": id}))
    }
}

/// Tools only a "next release" has (see `changes.rs`).
#[tool_router(router = next_release_tools)]
impl ExampleServer {
    #[tool(
        name = "multiply",
        title = "Multiply Numbers",
        description = "Multiply two numbers and return their product.",
        input_schema = number_pair_schema("First factor", "Second factor"),
        output_schema = multiply_output(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn multiply(&self, Parameters(args): Parameters<NumberPair>) -> CallToolResult {
        structured(json!({"product": number(args.a * args.b)}))
    }

    #[tool(
        name = "send_greeting",
        title = "Send Greeting",
        description = "Send a friendly greeting message to the team.",
        input_schema = greeting_input(),
        annotations(read_only_hint = false, open_world_hint = true)
    )]
    async fn send_greeting(&self, Parameters(args): Parameters<GreetingArgs>) -> String {
        format!(
            "greeting sent ({} characters)",
            args.message.chars().count()
        )
    }
}

fn greeting_input() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The greeting text"}},
        "required": ["message"],
    }))
}

#[derive(Deserialize)]
pub struct GreetingArgs {
    message: String,
}

/// The `send_greeting` tool of `--change add-greeting-tool`.
pub fn greeting_route() -> ToolRoute<ExampleServer> {
    ExampleServer::next_release_tools()
        .map
        .remove("send_greeting")
        .expect("send_greeting is a next-release tool")
}

/// The `multiply` tool of `--change add-tool`.
pub fn multiply_route() -> ToolRoute<ExampleServer> {
    ExampleServer::next_release_tools()
        .map
        .remove("multiply")
        .expect("multiply is a next-release tool")
}

/// The full router: the built-in tools plus `extra` generated ones.
pub fn router(extra: usize) -> ToolRouter<ExampleServer> {
    let mut router = ExampleServer::builtin_tools();
    for index in 0..extra {
        router.add_route(generated_tool(index));
    }
    router
}

/// `gen_NNNN`: one required argument whose name and type vary with the index.
fn generated_tool(index: usize) -> ToolRoute<ExampleServer> {
    let name = format!("gen_{index:04}");
    let (kind, rust_check): (&str, fn(&Value) -> bool) = match index % 3 {
        0 => ("string", Value::is_string),
        1 => ("integer", |v| v.is_i64() || v.is_u64()),
        _ => ("boolean", Value::is_boolean),
    };
    let arg = format!("arg_{index}");
    let input = schema(json!({
        "type": "object",
        "properties": {arg.clone(): {"type": kind, "description": format!("Input {index} ({kind})")}},
        "required": [arg],
    }));
    let tool = Tool::new(
        name.clone(),
        format!("Generated tool number {index}; takes one {kind} argument `{arg}`."),
        input,
    )
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    ToolRoute::new_dyn(tool, move |context| {
        let reply = match context.arguments.as_ref().and_then(|args| args.get(&arg)) {
            Some(value) if rust_check(value) => {
                CallToolResult::success(vec![ContentBlock::text(format!("{name}: {value}"))])
            }
            Some(value) => CallToolResult::error(vec![ContentBlock::text(format!(
                "invalid arguments: `{arg}` must be of type {kind}, got {value}"
            ))]),
            None => CallToolResult::error(vec![ContentBlock::text(format!(
                "invalid arguments: missing required argument `{arg}`"
            ))]),
        };
        Box::pin(async move { Ok::<_, McpError>(reply.into()) })
    })
}

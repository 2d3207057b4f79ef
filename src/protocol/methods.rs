//! JSON-RPC method names of both eras, and what an era removed.

pub const INITIALIZE: &str = "initialize";
pub const NOTIFICATIONS_INITIALIZED: &str = "notifications/initialized";
pub const SERVER_DISCOVER: &str = "server/discover";
pub const PING: &str = "ping";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_CALL: &str = "tools/call";
pub const RESOURCES_LIST: &str = "resources/list";
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
pub const RESOURCES_READ: &str = "resources/read";
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
pub const PROMPTS_LIST: &str = "prompts/list";
pub const PROMPTS_GET: &str = "prompts/get";
pub const COMPLETION_COMPLETE: &str = "completion/complete";
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// Requests that only read: a later client of the same server (or session) sees no trace
/// of them. The engine lets scenarios made of them share a warm server process.
pub const READ_ONLY: &[&str] = &[
    PING,
    SERVER_DISCOVER,
    TOOLS_LIST,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_READ,
    PROMPTS_LIST,
    PROMPTS_GET,
    COMPLETION_COMPLETE,
];
/// Messages that make a connection what it is (the legacy handshake): a step that sends
/// one tests the connection's life, on a process of its own.
pub const CONNECTION_LIFE: &[&str] = &[INITIALIZE, NOTIFICATIONS_INITIALIZED];
pub const NOTIFICATIONS_CANCELLED: &str = "notifications/cancelled";
pub const NOTIFICATIONS_PROGRESS: &str = "notifications/progress";
pub const NOTIFICATIONS_MESSAGE: &str = "notifications/message";
pub const NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";
pub const NOTIFICATIONS_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
pub const NOTIFICATIONS_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
pub const NOTIFICATIONS_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
pub const NOTIFICATIONS_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
pub const NOTIFICATIONS_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// Server notifications bound to a server capability, each with the capability's path in
/// `ServerCapabilities`: a server that does not declare it has no business sending them
/// (logging: "Servers that emit log message notifications MUST declare the logging
/// capability"; the others: basic/lifecycle Operation, "only use capabilities that were
/// successfully negotiated" — the rule table gives each its level per revision).
pub const CAPABILITY_BOUND: &[(&str, &str)] = &[
    (NOTIFICATIONS_MESSAGE, "logging"),
    (NOTIFICATIONS_TOOLS_LIST_CHANGED, "tools.listChanged"),
    (NOTIFICATIONS_PROMPTS_LIST_CHANGED, "prompts.listChanged"),
    (
        NOTIFICATIONS_RESOURCES_LIST_CHANGED,
        "resources.listChanged",
    ),
    (NOTIFICATIONS_RESOURCES_UPDATED, "resources.subscribe"),
];

/// Methods the modern era (2026-07-28) removed: a modern server answers them with -32601.
pub const REMOVED_IN_MODERN: &[&str] = &[
    INITIALIZE,
    NOTIFICATIONS_INITIALIZED,
    PING,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
];
/// A server-to-client request (deprecated in 2026-07-28).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// A server-to-client request (deprecated in 2026-07-28).
pub const ROOTS_LIST: &str = "roots/list";
/// A server-to-client request.
pub const ELICITATION_CREATE: &str = "elicitation/create";

/// The client capability a server-to-client request needs (`roots/list` → `roots`, …):
/// a server MUST NOT ask for one the client did not declare (2025-11-25: each feature's
/// Capabilities section; 2026-07-28: `basic/patterns/mrtr`).
pub fn client_capability_for(method: &str) -> Option<&'static str> {
    match method {
        ROOTS_LIST => Some("roots"),
        SAMPLING_CREATE_MESSAGE => Some("sampling"),
        ELICITATION_CREATE => Some("elicitation"),
        _ => None,
    }
}

/// The requests a modern server may answer with an `input_required` result (2026-07-28
/// `basic/patterns/mrtr`).
pub const MULTI_ROUND_TRIP: &[&str] = &[TOOLS_CALL, PROMPTS_GET, RESOURCES_READ];

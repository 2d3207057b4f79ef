//! HTTP header names of the Streamable HTTP transport.

pub const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
pub const SESSION_ID: &str = "Mcp-Session-Id";
/// Modern era: the method of the request, mirrored for routing.
pub const METHOD: &str = "Mcp-Method";
/// Modern era: the tool/prompt/resource name of the request, mirrored for routing.
pub const NAME: &str = "Mcp-Name";
/// Modern era: prefix of the headers that mirror `x-mcp-header` parameters.
pub const PARAM_PREFIX: &str = "Mcp-Param-";
pub const LAST_EVENT_ID: &str = "Last-Event-ID";

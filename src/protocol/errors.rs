//! JSON-RPC and MCP error codes.

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// Legacy era: a resource that does not exist.
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// Modern era: a header does not match the body (e.g. `Mcp-Method`, `Mcp-Param-*`).
pub const HEADER_MISMATCH: i64 = -32020;
/// Modern era: the request lacks a client capability the server requires
/// (`data.requiredCapabilities`).
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// Modern era: unsupported protocol version (`data.supported`).
pub const UNSUPPORTED_VERSION: i64 = -32022;
/// The user rejected a sampling request (`client/sampling` Error Handling, 2025-06-18 on:
/// code -1, "User rejected sampling request").
pub const USER_REJECTED: i64 = -1;

/// The error codes only the modern era defines.
pub const MODERN_ONLY: &[i64] = &[
    HEADER_MISMATCH,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_VERSION,
];

/// The JSON-RPC errors a server gives without doing any work — the message is malformed,
/// the method unknown, the params invalid (JSON-RPC 2.0 section 5.1): a request expected
/// to get one of these is expected to be answered at once.
pub const ANSWERED_AT_ONCE: &[i64] = &[
    PARSE_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    INVALID_PARAMS,
];

/// The prefix of the methods mcpspec's packs make up to probe "an unknown method" (no
/// server serves them: answered -32601, at once).
pub const UNKNOWN_METHOD_PREFIX: &str = "mcpspec/";

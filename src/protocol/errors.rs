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

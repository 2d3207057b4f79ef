//! `_meta` keys the modern era (2026-07-28) carries on every request and result.

pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Notification `_meta` (and the final listen result's): the JSON-RPC id of the
/// `subscriptions/listen` request whose stream carries it (MUST on every notification of
/// that stream).
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The reverse-DNS prefix every key above shares.
pub const PREFIX: &str = "io.modelcontextprotocol/";

//! `mcpspec-example-server`: a dual-era MCP server (legacy 2025-11-25 with `initialize`,
//! modern 2026-07-28 with per-request `_meta`) on rmcp, over stdio or Streamable HTTP,
//! with defects that can be seeded by flag for mcpspec's fault tests and contract changes
//! that make it a "next release" for mcpspec's snapshot and diff tests.

mod auth;
mod changes;
mod close_after;
mod defects;
mod interactive;
mod jwks;
mod listen;
mod orders;
mod paging;
mod reach_out;
mod server;
mod tasks;
mod tools;
mod transport;
mod utilities;
mod wire;

use std::net::SocketAddr;

use clap::Parser;

use crate::{
    changes::{Change, Changes},
    defects::{Defect, Defects},
    server::Settings,
};

#[derive(Parser, Debug)]
#[command(
    name = "mcpspec-example-server",
    version = server::VERSION,
    about = "Example MCP server for mcpspec (stdio by default, or Streamable HTTP with --http)",
    after_help = format!("{}\n{}", Defect::catalog_help(), Change::catalog_help())
)]
struct Cli {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR must be a loopback
    /// address; port 0 picks a free port. Prints `listening on <url>` to stdout once bound.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,

    /// Page size of tools/list, resources/list, resources/templates/list and prompts/list
    /// (0 = no pagination).
    #[arg(long, value_name = "N", default_value_t = 0)]
    page_size: usize,

    /// `ttlMs` of cacheable results in the modern era (the lists, resources/read,
    /// server/discover). Delivery only: not part of the contract.
    #[arg(long, value_name = "N", default_value_t = server::DEFAULT_TTL_MS)]
    ttl_ms: u64,

    /// Return tools/list, resources/list, resources/templates/list and prompts/list in
    /// reverse order. Delivery only: not part of the contract.
    #[arg(long)]
    reverse_order: bool,

    /// List no tools, resources, resource templates or prompts (the capabilities stay
    /// declared): a correct server with empty lists.
    #[arg(long)]
    empty: bool,

    /// Add N generated tools `gen_0000`..`gen_<N-1>`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    extra_tools: usize,

    /// Seed a defect (repeatable); see the list below.
    #[arg(long = "defect", value_name = "NAME[=VALUE]")]
    defects: Vec<Defect>,

    /// Apply a contract change (repeatable): serve a "next release"; see the list below.
    #[arg(long = "change", value_name = "NAME")]
    changes: Vec<Change>,

    /// HTTP only: users with static bearer tokens, `NAME=TOKEN,…` (e.g.
    /// `alice=T1,bob=T2`). Every request needs one of these tokens (401 otherwise); notes
    /// created by a user (`note://ID`) are readable by that user only.
    #[arg(long, value_name = "NAME=TOKEN,...", requires = "http")]
    auth_tokens: Option<String>,

    /// HTTP only: answer with a JSON body instead of SSE when the reply is a single message
    /// (modern, stateless requests; legacy sessions always use SSE).
    #[arg(long, requires = "http")]
    json_response: bool,

    /// HTTP only: act as an OAuth-protected resource accepting HS256 JWT bearer tokens
    /// signed with this secret (needs --auth-audience); others get 401 with
    /// `WWW-Authenticate: Bearer resource_metadata="…"`.
    #[arg(long, value_name = "SECRET")]
    auth_jwt_secret: Option<String>,

    /// Print an HS256 JWT with these claims (a JSON object), signed with
    /// --auth-jwt-secret, and exit: the tokens tests send to the server.
    #[arg(long, value_name = "CLAIMS", requires = "auth_jwt_secret")]
    mint_jwt: Option<String>,

    /// The audience (`aud`) tokens must name, with --auth-jwt-secret or --auth-jwks
    /// (default with --auth-jwks: the server's own URL, `http://ADDR/mcp`, as MCP clients
    /// ask for it).
    #[arg(long, value_name = "AUD")]
    auth_audience: Option<String>,

    /// HTTP only: act as an OAuth-protected resource accepting RS256/ES256 JWTs of the
    /// authorization server whose key set (JWKS) is at this URL, fetched at start (needs
    /// --auth-issuer and --auth-audience).
    #[arg(
        long,
        value_name = "URL",
        conflicts_with = "auth_jwt_secret",
        requires = "auth_issuer"
    )]
    auth_jwks: Option<String>,

    /// The issuer (`iss`) tokens must name, with --auth-jwks; also the authorization
    /// server the protected-resource metadata names.
    #[arg(long, value_name = "URL", requires = "auth_jwks")]
    auth_issuer: Option<String>,

    /// A scope tokens must grant (403 `insufficient_scope` otherwise).
    #[arg(long, value_name = "SCOPE")]
    auth_scope: Option<String>,

    /// Refuse each token as expired (401 `invalid_token`) after N requests: a token
    /// that expires in the middle of a run, on cue.
    #[arg(long, value_name = "N")]
    auth_token_uses: Option<u32>,

    /// HTTP only: answer more than N requests per second with 429 Too Many Requests.
    #[arg(long, value_name = "N", requires = "http")]
    rate_limit: Option<u32>,

    /// Declare and serve the protocol utilities: logging (per-request logLevel, legacy
    /// logging/setLevel), completions, resources.subscribe (legacy), tools.listChanged,
    /// and a `confirm` tool that needs elicitation (modern: -32021 without it, an
    /// input_required / requestState round trip with it).
    #[arg(long)]
    utilities: bool,

    /// List the interactive tools, which ask the client back: `ask_confirmation`
    /// (elicitation), `summarize` (sampling), `sample_with_tools` (sampling with tools),
    /// `client_roots` (roots). Legacy: a
    /// server-to-client request; 2026-07-28: an input_required round trip.
    #[arg(long)]
    interactive: bool,

    /// With --interactive, legacy era: send the tools' requests to the client unrelated to
    /// the call, as server-everything sends `roots/list` — over HTTP they go on the
    /// session's GET stream, not on the call's response stream.
    #[arg(long, requires = "interactive")]
    ask_on_session_stream: bool,

    /// Answer `initialize` as a server whose newest legacy revision is REV (2024-11-05,
    /// 2025-03-26, 2025-06-18 or 2025-11-25): an older offer is echoed, a newer or unknown
    /// one gets REV as the counter-offer. Only the negotiated version changes; the
    /// server's behaviour stays the same.
    #[arg(long, value_name = "REV")]
    max_revision: Option<String>,

    /// Serve `create_order` (returns a minted `order_ref`) and the read-only `get_order`
    /// (takes `order_ref`; an order is readable by its creator only): a handle whose
    /// consumer is found by the key's name.
    #[arg(long)]
    orders: bool,

    /// Serve `reach_out`, a tool labelled read-only and closed-world that tries to connect
    /// to HOST:PORT and to write `$HOME/../mcpspec-reach-out.txt`, and says what happened
    /// (isError when either failed): what `mcpspec run --sandbox` must stop.
    #[arg(long, value_name = "HOST:PORT")]
    reach_out: Option<String>,
}

/// `alice=T1,bob=T2` → `[(T1, alice), (T2, bob)]` (token → user).
fn parse_users(value: &str) -> Result<Vec<(String, String)>, String> {
    value
        .split(',')
        .map(|pair| match pair.split_once('=') {
            Some((user, token)) if !user.is_empty() && !token.is_empty() => {
                Ok((token.to_owned(), user.to_owned()))
            }
            _ => Err(format!("`{pair}`: expected NAME=TOKEN")),
        })
        .collect()
}

/// Reports a command-line misuse; exit code 2, like clap's own errors.
fn usage_error(message: &str) -> i32 {
    eprintln!("error: {message}");
    2
}

fn main() {
    let cli = Cli::parse();
    let code = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run(cli)),
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            1
        }
    };
    // Exit right away: tokio's stdin reader is a blocking read that would otherwise keep
    // the runtime's shutdown waiting for one more line. All output is flushed by now.
    std::process::exit(code)
}

async fn run(cli: Cli) -> i32 {
    let defects = Defects::new(cli.defects);

    if let (Some(claims), Some(secret)) = (&cli.mint_jwt, &cli.auth_jwt_secret) {
        return match auth::mint(secret, claims) {
            Ok(token) => {
                println!("{token}");
                0
            }
            Err(error) => usage_error(&format!("--mint-jwt: {error}")),
        };
    }
    if cli.auth_jwt_secret.is_some() && (cli.http.is_none() || cli.auth_audience.is_none()) {
        return usage_error("--auth-jwt-secret needs --http and --auth-audience");
    }
    if cli.auth_jwks.is_some() && cli.http.is_none() {
        return usage_error("--auth-jwks needs --http");
    }
    let jwt_keys = match (&cli.auth_jwt_secret, &cli.auth_jwks, &cli.auth_issuer) {
        (Some(secret), _, _) => Some(auth::Keys::Secret(secret.as_bytes().to_vec())),
        (None, Some(url), Some(issuer)) => match jwks::Jwks::fetch(url).await {
            Ok(keys) => Some(auth::Keys::Jwks {
                keys: std::sync::Arc::new(keys),
                issuer: issuer.clone(),
            }),
            Err(error) => return usage_error(&format!("--auth-jwks: {error}")),
        },
        _ => None,
    };
    if jwt_keys.is_none() && (cli.auth_scope.is_some() || cli.auth_token_uses.is_some()) {
        return usage_error(
            "--auth-scope and --auth-token-uses need --auth-jwt-secret or --auth-jwks",
        );
    }

    if let Some(addr) = cli.http
        && !addr.ip().is_loopback()
    {
        return usage_error(&format!(
            "refusing to bind non-loopback address {addr}; use 127.0.0.1 or [::1]"
        ));
    }
    if let Some(defect) = defects.misplaced(cli.http.is_some()).first() {
        let info = defect.info();
        return usage_error(&format!("defect `{}` is {}", info.name, info.scope));
    }
    if defects.weakens_auth() && jwt_keys.is_none() {
        return usage_error("the auth-* defects weaken --auth-jwt-secret: give it too");
    }
    if defects.has(&Defect::ExitAtStart) {
        eprintln!("fatal: config file missing");
        return 1;
    }

    let auth_tokens = match cli.auth_tokens.as_deref().map(parse_users).transpose() {
        Ok(users) => users.unwrap_or_default(),
        Err(message) => return usage_error(&format!("--auth-tokens: {message}")),
    };
    let max_revision = match cli.max_revision.as_deref() {
        None => None,
        Some(rev) => match server::LEGACY_REVISIONS.iter().find(|r| **r == rev) {
            Some(r) => Some(*r),
            None => {
                return usage_error(&format!(
                    "--max-revision {rev}: expected one of {}",
                    server::LEGACY_REVISIONS.join(", ")
                ));
            }
        },
    };
    let settings = Settings {
        page_size: cli.page_size,
        extra_tools: cli.extra_tools,
        defects,
        changes: Changes::new(cli.changes),
        ttl_ms: cli.ttl_ms,
        reverse_order: cli.reverse_order,
        auth_tokens,
        empty: cli.empty,
        utilities: cli.utilities,
        interactive: cli.interactive,
        ask_on_session_stream: cli.ask_on_session_stream,
        orders: cli.orders,
        reach_out: cli.reach_out,
        max_revision,
    };
    let result = match cli.http {
        Some(addr) => {
            let security = transport::HttpSecurity {
                jwt: jwt_keys.map(|keys| {
                    let audience = cli.auth_audience;
                    let rules = auth::Rules {
                        scope: cli.auth_scope,
                        token_uses: cli.auth_token_uses,
                    };
                    (keys, audience, rules)
                }),
                rate_limit: cli.rate_limit,
            };
            transport::serve_http(settings, addr, cli.json_response, security).await
        }
        None => transport::serve_stdio(settings).await,
    };
    match result {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("error: {error}");
            1
        }
    }
}

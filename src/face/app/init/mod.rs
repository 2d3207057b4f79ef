//! `mcpspec init`: getting started in one command. Connects to a live server in every era
//! it speaks, takes its contract snapshot, calls its read-only tools, gets its prompts and
//! reads its resources with example arguments, and writes a starter project whose
//! expectations are what held at that moment: it passes against that server, and fails
//! when the server changes.

mod asks;
mod probe;
mod render;
pub mod yaml;

use std::path::{Path, PathBuf};

use super::inputs::usage;
use crate::face::cli::{InitArgs, TargetArgs, UsageError, exit};
use crate::ground::redact::{is_sensitive_header, is_sensitive_name};

pub use render::{PACK_DIR, SCHEMA_DIR, TARGET_NAME};

pub async fn init(args: InitArgs) -> i32 {
    let config_path = args.dir.join(crate::face::config::DEFAULT_FILE);
    if config_path.exists() && !args.force {
        return refuse(
            &args.dir,
            &[PathBuf::from(crate::face::config::DEFAULT_FILE)],
        );
    }
    let (target, secrets) = match args.target.to_target() {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let redactor = crate::ground::redact::Redactor::new(&secrets);
    let redact = |s: &str| crate::ground::redact::escape_controls(&redactor.redact(s)).into_owned();
    for era in &args.eras {
        if let Err(e) = crate::protocol::era::EraRequest::parse(era) {
            return usage(UsageError(format!("--era: {e}")));
        }
    }
    crate::ground::signals::install();
    // Which eras, each with an open connection.
    let mut connections = Vec::new();
    let mut notes = Vec::new();
    if args.eras.is_empty() {
        // Every era the server speaks, each probed with the full timeout (a slow-starting
        // server must not lose its modern era to the short `auto` probe).
        let mut refused = Vec::new();
        for label in ["legacy", crate::protocol::era::MODERN_REVISION] {
            match probe::connect(&target, label).await {
                Ok(c) => connections.push((label.to_string(), c)),
                Err(e) if e.kind == crate::run::client::ConnectErrorKind::Protocol => {
                    refused.push((label, e))
                }
                Err(e) => {
                    for (_, c) in connections {
                        c.close().await;
                    }
                    let code = crate::face::app::connect::connect_failed(&e, &secrets);
                    explain_oauth(&args.target).await;
                    return code;
                }
            }
        }
        if connections.is_empty() {
            errln!("error: the server connected in no era");
            let mut code = exit::FAILED;
            for (_, e) in &refused {
                code = crate::face::app::connect::connect_failed(e, &secrets);
            }
            return code;
        }
        for (label, e) in refused {
            notes.push(format!(
                "{label} era not written: the server did not connect in it ({})",
                redact(&e.message)
            ));
        }
    } else {
        for era in &args.eras {
            match crate::face::app::connect::open(&args.target, era).await {
                Ok((c, _)) => connections.push((era.clone(), c)),
                Err(code) => {
                    for (_, c) in connections {
                        c.close().await;
                    }
                    return code;
                }
            }
        }
    }
    let labels: Vec<String> = connections.iter().map(|(l, _)| l.clone()).collect();
    let mut eras = Vec::new();
    let mut failure = None;
    for (label, mut conn) in connections {
        if failure.is_none() {
            match probe::observe(&mut conn, &label).await {
                Ok(seen) => eras.push(seen),
                Err(e) => failure = Some(format!("{label}: {e}")),
            }
        }
        conn.close().await;
    }
    if let Some(e) = failure {
        errln!(
            "error: cannot take the server's contract snapshot: {}",
            redact(&e)
        );
        return exit::FAILED;
    }
    let target_config = match target_config(&args.target, &args.dir) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let (files, mut item_notes) = render::project(
        &eras,
        &target_config,
        &render::Schemas {
            scenario: crate::face::app::schema::schema_text(),
            pack: crate::face::app::schema::pack_schema_text(),
            config: crate::face::app::schema::config_schema_text(),
        },
    );
    notes.append(&mut item_notes);
    // The tools that ask back, seen by a client that declares every capability.
    let asking = asks::probe(&target, &labels).await;
    let mut files = files;
    files.extend(asks::files(Path::new(render::PACK_DIR), &asking, &labels));
    if !asking.is_empty() {
        let names: Vec<&str> = asking.iter().map(|a| a.tool.as_str()).collect();
        notes.push(format!(
            "{} tool(s) ask the client back ({}): a scenario each in {}/asks/ declares the client capabilities and answers with defaults",
            asking.len(),
            names.join(", "),
            render::PACK_DIR
        ));
    }
    let masks: usize = files
        .iter()
        .map(|f| crate::ground::redact::count_masks(&f.text))
        .sum();
    if masks > 0 {
        notes.push(format!(
            "{masks} secret value(s) the server showed are redacted from the written files (shown as ***)"
        ));
    }
    if !args.force {
        let existing: Vec<PathBuf> = files
            .iter()
            .filter(|f| args.dir.join(&f.path).exists())
            .map(|f| f.path.clone())
            .collect();
        if !existing.is_empty() {
            return refuse(&args.dir, &existing);
        }
    }
    for f in &files {
        let path = args.dir.join(&f.path);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&path, &f.text));
        if let Err(e) = written {
            errln!("error: cannot write {}: {e}", path.display());
            return exit::INVALID_INPUT;
        }
    }
    match ignore_state(&args.dir) {
        Ok(true) => notes.push(format!(
            ".gitignore ignores {} (the state of `run --last-failed`, not to commit)",
            crate::face::last_run::FILE
        )),
        Ok(false) => {}
        Err(e) => notes.push(format!("cannot update .gitignore: {e}")),
    }
    notes.extend(leftovers(&args.dir, &files).into_iter().map(|p| {
        format!(
            "{} was not written by this init and is still loaded by `mcpspec run` (delete it if its item is gone)",
            p.display()
        )
    }));
    if let Err(code) = self_check(&args.dir) {
        return code;
    }
    summary(&args.dir, &eras, &files, &target_config, &notes, &redact);
    exit::OK
}

/// The variable the suggested `auth:` block names for the client secret.
const SECRET_PLACEHOLDER: &str = "MCP_CLIENT_SECRET";

/// The client id of the suggested `auth:` block: the one registered with the server's
/// authorization server, which only its owner knows.
const CLIENT_ID_PLACEHOLDER: &str = "CLIENT_ID";

/// After a failed connection to an HTTP target given no credentials: when the server is
/// behind OAuth, say which authorization server, which grants, and the `auth:` block
/// (placeholders for the client, never a secret) and command that sign in.
async fn explain_oauth(t: &TargetArgs) {
    let (Some(url), None, None) = (&t.url, &t.bearer_env, &t.oauth_client_id) else {
        return;
    };
    if t.headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("authorization"))
    }) {
        return;
    }
    let timeout = t.timeout.unwrap_or(crate::face::cli::DEFAULT_TIMEOUT);
    let found = crate::run::client::http::oauth::discover_authorization(url, timeout).await;
    let Ok(Some(endpoint)) = found else {
        return;
    };
    let grants = endpoint.grant_types.join(", ");
    let safe_url = crate::ground::redact::safe_url(url);
    if !endpoint
        .grant_types
        .iter()
        .any(|g| g == "client_credentials")
    {
        errln!(
            "note: the server is behind OAuth: its authorization server {} supports the grants {grants}, not client_credentials (the grant CI signs in with)\n  = help: a person signs in once with `mcpspec auth login {}` (later runs and init use the cached sign-in); CI gives a token with --bearer-env VAR",
            endpoint.issuer,
            shell_words::quote(&safe_url)
        );
        return;
    }
    let block = render::AuthConfig {
        client_id: CLIENT_ID_PLACEHOLDER.into(),
        secret: render::AuthSecret::Env(SECRET_PLACEHOLDER.into()),
        scope: None,
    };
    errln!(
        "note: the server is behind OAuth: its authorization server {} supports the grants {grants}\n  = help: with a client registered there (client_credentials), init signs in and writes the target's `auth:` block:\n      {SECRET_PLACEHOLDER}=… mcpspec init --url {} --oauth-client-id {CLIENT_ID_PLACEHOLDER} --oauth-client-secret-env {SECRET_PLACEHOLDER}\n    mcpspec.yaml then holds (the secret stays in the variable):\n{}",
        endpoint.issuer,
        shell_words::quote(&safe_url),
        block.yaml().trim_end()
    );
}

/// Add the run state file to the project's `.gitignore` (created if need be) unless a line
/// already names it or `.mcpspec/`; whether a line was added.
fn ignore_state(dir: &Path) -> std::io::Result<bool> {
    let path = dir.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let state = crate::face::last_run::FILE;
    let covered = text.lines().map(str::trim).any(|l| {
        let l = l.trim_start_matches('/');
        l == state || l == ".mcpspec" || l == ".mcpspec/"
    });
    if covered {
        return Ok(false);
    }
    let sep = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    std::fs::write(&path, format!("{text}{sep}{state}\n"))?;
    Ok(true)
}

fn refuse(dir: &Path, existing: &[PathBuf]) -> i32 {
    let shown: Vec<String> = existing
        .iter()
        .take(5)
        .map(|p| dir.join(p).display().to_string())
        .collect();
    let more = existing.len().saturating_sub(shown.len());
    errln!(
        "error: {} already exist{}: {}{}\n  = help: pass --force to overwrite them, or choose another folder (`mcpspec init DIR ...`)",
        if existing.len() == 1 {
            "a file".to_string()
        } else {
            format!("{} files", existing.len())
        },
        if existing.len() == 1 { "s" } else { "" },
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
    exit::INVALID_INPUT
}

/// The target for `mcpspec.yaml`, without secrets: a bearer token stays in its variable;
/// secret headers and env values are left out with a comment saying how to supply them.
fn target_config(t: &TargetArgs, dir: &Path) -> Result<render::TargetConfig, UsageError> {
    let mut omitted = Vec::new();
    let mut env = Vec::new();
    for kv in &t.env {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| UsageError(format!("--env `{kv}`: expected K=V")))?;
        if is_sensitive_name(k) && !v.is_empty() {
            omitted.push(format!(
                "env {k} looks like a secret, so it is not written: export {k} before \
                 `mcpspec run` (the server inherits the environment)"
            ));
        } else {
            env.push((k.to_string(), v.to_string()));
        }
    }
    let mut headers = Vec::new();
    for h in &t.headers {
        let (k, v) = crate::face::cli::split_header(h)?;
        if is_sensitive_header(&k) && !v.is_empty() {
            omitted.push(format!(
                "header {k} is a secret, so it is not written: pass it with \
                 `mcpspec run --header` or use bearerEnv"
            ));
        } else {
            headers.push((k, v));
        }
    }
    // Credentials in the URL (userinfo, `?token=…`) are secrets like headers: not written.
    let url = t.url.as_deref().map(crate::ground::redact::safe_url);
    if url.as_deref() != t.url.as_deref() {
        omitted.push(
            "the URL's credentials (user:password@, token-like query values) are secrets, \
             so they are not written: pass them with `mcpspec run --url` or use bearerEnv"
                .to_string(),
        );
    }
    Ok(render::TargetConfig {
        stdio: t.stdio.clone(),
        url,
        env,
        cwd: t.cwd.as_deref().map(|c| relative_to(c, dir)),
        headers,
        bearer_env: t.bearer_env.clone(),
        auth: t
            .oauth_client_id
            .as_ref()
            .map(|client_id| render::AuthConfig {
                client_id: client_id.clone(),
                secret: match (&t.oauth_client_secret_env, &t.oauth_client_secret_file) {
                    (Some(var), _) => render::AuthSecret::Env(var.clone()),
                    (None, Some(file)) => render::AuthSecret::File(relative_to(file, dir)),
                    // The flags ask for one of the two (`to_target` said so already).
                    (None, None) => render::AuthSecret::Env(SECRET_PLACEHOLDER.into()),
                },
                scope: t.oauth_scope.clone(),
            }),
        timeout: t.timeout.map(|d| humantime::format_duration(d).to_string()),
        sandbox: t.sandbox,
        omitted,
    })
}

/// `path` (given relative to the working directory) as `mcpspec.yaml` in `dir` needs it:
/// relative to `dir` when inside it, else absolute.
fn relative_to(path: &Path, dir: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (path, dir) = (abs(path), abs(dir));
    match path.strip_prefix(&dir) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// Scenario files in the pack folder that this init did not write (after `--force`: items
/// the server no longer has, or the user's own scenarios).
fn leftovers(dir: &Path, files: &[render::File]) -> Vec<PathBuf> {
    let written: std::collections::HashSet<&Path> =
        files.iter().map(|f| f.path.as_path()).collect();
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from(PACK_DIR)];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let rel = rel.join(entry.file_name());
            if entry.path().is_dir() {
                stack.push(rel);
            } else if rel.extension().is_some_and(|e| e == "yaml" || e == "yml")
                && !written.contains(rel.as_path())
            {
                found.push(rel);
            }
        }
    }
    found.sort();
    found
}

/// The written project must load: a failure here is a bug in init, reported as such.
fn self_check(dir: &Path) -> Result<(), i32> {
    let config = dir.join(crate::face::config::DEFAULT_FILE);
    let loaded = crate::face::config::Config::find(Some(&config))
        .and_then(|_| crate::language::dsl::load::load_paths(&[dir.join(PACK_DIR)]).map(|_| ()));
    loaded.map_err(|errors| {
        errln!(
            "{}\nerror: the generated project does not validate; this is a bug in `mcpspec init`",
            errors.render()
        );
        exit::FAILED
    })
}

fn summary(
    dir: &Path,
    eras: &[probe::EraSeen],
    files: &[render::File],
    target: &render::TargetConfig,
    notes: &[String],
    redact: &dyn Fn(&str) -> String,
) {
    let mut out = String::new();
    let described: Vec<&str> = eras.iter().map(|e| e.described.as_str()).collect();
    let snap = &eras[0].snapshot;
    out.push_str(&format!(
        "connected to {} in {}\n",
        render::server_label(eras),
        described.join(", ")
    ));
    let read_only = snap.tools.iter().filter(|t| probe::is_read_only(t)).count();
    out.push_str(&format!(
        "found {} tool(s) ({read_only} read-only), {} prompt(s), {} resource(s), {} resource template(s)\n",
        snap.tools.len(),
        snap.prompts.len(),
        snap.resources.len(),
        snap.resource_templates.len()
    ));
    out.push_str(&format!("wrote into {}:\n", dir.display()));
    // Snapshot and schema files are listed by folder.
    let mut folders: Vec<(PathBuf, usize)> = Vec::new();
    for f in files {
        let grouped = f.path.extension().is_some_and(|e| e == "json");
        if grouped {
            let parent = f.path.parent().unwrap_or(Path::new("")).to_path_buf();
            match folders.iter_mut().find(|(p, _)| *p == parent) {
                Some((_, n)) => *n += 1,
                None => folders.push((parent, 1)),
            }
        } else {
            out.push_str(&format!("  {}\n", f.path.display()));
        }
    }
    for (folder, n) in folders {
        out.push_str(&format!("  {}/ ({n} files)\n", folder.display()));
    }
    for line in &target.omitted {
        out.push_str(&format!("note: {line}\n"));
    }
    for note in notes {
        out.push_str(&format!("note: {}\n", redact(note)));
    }
    out.push_str("next:\n");
    if dir != Path::new(".") {
        out.push_str(&format!(
            "  cd {}\n",
            shell_words::quote(&dir.display().to_string())
        ));
    }
    out.push_str(&format!(
        "  mcpspec validate {PACK_DIR}   # check the scenarios\n  mcpspec run                  # run them against the `{TARGET_NAME}` target, every era\n"
    ));
    use std::io::Write as _;
    let _ = std::io::stdout().write_all(out.as_bytes());
}
